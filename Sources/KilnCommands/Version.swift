/// The version `kiln version` prints.
let kilnVersion = "0.1.0-dev"
