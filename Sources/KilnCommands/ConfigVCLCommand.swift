import ArgumentParser
import KilnHTTP
import KilnServer

extension ConfigCommand {
    /// `kiln config vcl`: the edge's header normalisation (`EdgeRecipe`) for this configuration's
    /// `http.hint_widths` and `http.allow_origin`, to paste over the generated block of
    /// `varnish/kiln.vcl` when either setting differs from its default.
    struct VCL: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "vcl",
            abstract: "The VCL subroutine kiln_normalize_hints for this configuration (varnish/kiln.vcl's generated block).",
            discussion: "Takes the same --config, KILN_* variables and flags as kiln serve.")

        @OptionGroup var options: SettingsOptions

        func run() throws {
            let settings = try Settings.loadOrExit(options)
            Output.line(EdgeRecipe(http: settings.configuration.http).vcl)
        }
    }
}
