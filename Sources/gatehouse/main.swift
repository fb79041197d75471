import GatehouseApp

#if canImport(Glibc)
import Glibc
#endif

// Everything lives in GatehouseApp: code here is main-actor isolated, and C callbacks
// defined here would trap when libmicrohttpd calls them from its own threads.
Gatehouse.blockTerminationSignals()
exit(await Gatehouse.main(CommandLine.arguments, environment: Environment.current))
