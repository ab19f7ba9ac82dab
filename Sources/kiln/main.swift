// The command line: parsing only; everything else lives in the libraries.
KilnCommand.main()
