import KilnCommands

// The command line: parsing only; everything else lives in the libraries. The build's custom
// processors are handed over first, before any thread starts.
BuildProcessors.registry = CustomProcessors.registry
KilnCommand.main()
