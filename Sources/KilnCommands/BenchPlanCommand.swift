import ArgumentParser
import KilnCodecs
import KilnModel
import KilnPipeline
import KilnPOSIX

/// `kiln bench-plan photo.jpg w:800/q:80`: what the pipeline will decode for a request, from the
/// source's header alone: the format, the stored size and the size after shrink-on-load (the DCT
/// scale TurboJPEG is asked for). `scripts/bench` times the libraries' floors at exactly that size.
/// A measurement tool: not shown in `kiln --help`.
struct BenchPlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-plan",
        abstract: "Print the decode size the pipeline plans for a source and a spec.",
        shouldDisplay: false)

    @Argument(help: "Source image file.")
    var input: String

    @Argument(help: "Processing spec, as in the URL without the source path (e.g. w:800/q:80).")
    var spec: String

    func run() throws {
        let data = try Files.read(input)
        guard let format = MagicSniffer().sniff(data).format else { throw ValidationError("\(input): not an image format Kiln reads") }
        let header = try Codecs.decoder(for: format).readHeader(data)
        let request = try SpecParser().parse("/" + spec + "/-/source")
        let minimum = ImagePipeline.minimumDecodeSize(for: request, header: header)
        let plan = DecodePlan.plan(format: format, data: data, header: header, minimum: minimum)
        Output.line("format=\(format.rawValue) source=\(header.size) decoded=\(plan.size)")
    }
}
