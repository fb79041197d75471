import GatehouseCore
import Testing

@Suite("Inline resumption")
struct InlineResumptionTests {
    /// Everything here runs on the test's own thread, which is what the batch is bound to.
    private final class Log {
        var entries: [String] = []
    }

    @Test("work deferred in a batch runs once, after the batch, in order; outside a batch nothing is deferred")
    func batching() {
        let log = Log()
        #expect(!InlineResumption.shared.afterBatch { log.entries.append("never") })
        InlineResumption.shared.batching {
            log.entries.append("body starts")
            #expect(InlineResumption.shared.afterBatch { log.entries.append("first") })
            // A nested batch joins the outer one instead of flushing early.
            InlineResumption.shared.batching {
                #expect(InlineResumption.shared.afterBatch { log.entries.append("second") })
            }
            log.entries.append("body ends")
        }
        #expect(log.entries == ["body starts", "body ends", "first", "second"])
        #expect(!InlineResumption.shared.afterBatch { log.entries.append("never") })
    }

    @Test("an inline turn is taken once; handing off holds for the whole body, and only on its thread")
    func turns() {
        #expect(!InlineResumption.shared.claimInlineTurn())
        InlineResumption.shared.runningInline {
            #expect(InlineResumption.shared.claimInlineTurn())
            #expect(!InlineResumption.shared.claimInlineTurn())
        }
        #expect(!InlineResumption.shared.isHandingOff)
        InlineResumption.shared.handingOff {
            #expect(InlineResumption.shared.isHandingOff)
            #expect(InlineResumption.shared.isHandingOff)
            #expect(!InlineResumption.shared.claimInlineTurn())
        }
        #expect(!InlineResumption.shared.isHandingOff)
    }
}
