/// What a vector source (SVG) costs to rasterise beyond its pixels, read from the sanitised
/// document before anything is drawn (`SVGSanitizer`), for the cost planner (`RequestCost`).
///
/// librsvg draws every element once per instance (`<use>` instantiates its target again), and
/// each filter primitive makes a surface of the filter region (at most the canvas, which
/// librsvg clips it to) and passes over it: the work is the raster's pixels times the passes,
/// plus the instances; the memory is the canvas plus the filter surfaces alive at once.
public struct VectorFacts: Sendable, Equatable {
    /// The document's own size in CSS pixels (width/height, else the viewBox).
    public var intrinsicWidth: Double
    public var intrinsicHeight: Double
    /// Elements kept by the sanitiser.
    public var elements: Int
    /// Elements drawn once `<use>` references are expanded (each instance counts its subtree).
    public var instances: Int
    /// Filter primitives (`fe*` elements) in the document.
    public var filterPrimitives: Int
    /// Full-raster passes the filter primitives make: two for most (the surface made and
    /// composited), more for kernels (`feConvolveMatrix` by its order², `feMorphology` by its
    /// window, `feTurbulence` by its octaves).
    public var filterPasses: Double
    /// Pixels of the `data:` images the document embeds (decoded by librsvg's loaders).
    public var embeddedPixels: Int

    public init(intrinsicWidth: Double, intrinsicHeight: Double, elements: Int, instances: Int, filterPrimitives: Int,
                filterPasses: Double, embeddedPixels: Int) {
        self.intrinsicWidth = intrinsicWidth
        self.intrinsicHeight = intrinsicHeight
        self.elements = elements
        self.instances = instances
        self.filterPrimitives = filterPrimitives
        self.filterPasses = filterPasses
        self.embeddedPixels = embeddedPixels
    }

    /// Full-raster passes of a render: one to draw, and the filters'.
    public var rasterPasses: Double { 1 + filterPasses }

    /// Canvas-sized surfaces alive at once: the canvas, and for a filter its source graphic,
    /// its result and up to two named inputs.
    public var surfaces: Int { 1 + min(filterPrimitives, 1) * 2 + min(max(filterPrimitives - 1, 0), 2) }
}
