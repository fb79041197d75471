// placeholder until the curl client lands
