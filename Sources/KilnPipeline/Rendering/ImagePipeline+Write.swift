import KilnModel

/// The write step of `render` (`RenderStep.write`): the product of the kind.
///
/// - An image (a still, or one frame of an animation): the output format chosen for its final
///   size and alpha (`f:auto` never answers with a format this server cannot write), refused with
///   `PipelineError.formatLimit` when the format cannot store it (WebP beyond 16383 px), flattened
///   when the format has no alpha, and encoded under `max_bytes` (`ByteBudget.swift`).
/// - An animation: its encoder finishes the file the frames went to.
/// - A document: `ImagePipeline+Document.swift`.
extension ImagePipeline {
    func write(_ job: RenderJob) throws {
        switch job.kind.product {
        case .image:
            try writeImage(job)
        case .animation:
            guard let sink = job.sink, let outputFormat = job.outputFormat else {
                throw DecodeError.corrupt("the animation has no frame 0")
            }
            try observer?.enter(.encode)
            job.encoded = try sink.finish()
            job.written = outputFormat
        case .document(let kind):
            try writeDocument(job, kind: kind)
        }
    }

    /// Chooses the format of the processed image, flattens it when the format has no alpha and
    /// encodes it.
    func writeImage(_ job: RenderJob) throws {
        guard var image = job.picked else { preconditionFailure("the decode step keeps the image") }
        let request = job.request
        var written = outputFormat(job, size: image.size, hasAlpha: image.hasAlpha)
        // f:auto never answers with a format this server cannot write (libavif not installed).
        if request.output.format == .auto && !stages.encoders.canEncode(written) {
            let encodable = job.accepted.filtered { stages.encoders.canEncode($0) }
            written = request.output.resolvedFormat(source: job.outputFormat ?? job.format, accepted: encodable,
                                                    size: image.size, hasAlpha: image.hasAlpha)
        }
        // The rendered size is what counts (a plan may be unknown): never hand the encoder more.
        try ImagePipeline.checkFormatLimit(written, size: image.size)
        if image.hasAlpha && !written.supportsAlpha {
            image = stages.flattener.flatten(image, onto: output.flattenBackground(for: request.output))
        }
        job.mark(.processed)

        try observer?.enter(.encode)
        let options = output.encodeOptions(format: written, request: request.output, metadata: job.metadata,
                                           iccProfile: job.keptProfile)
        let budgeted = try encode(image, options: options, budget: request.output.maxBytes)   // ByteBudget.swift
        job.encoded = budgeted.data
        job.budgeted = budgeted
        job.written = written
        job.frameSize = image.size
    }

    /// The format an image is written in. A still source resolves the request's format
    /// (`OutputOptions.resolvedFormat`); one frame of an animation keeps the format its admission
    /// chose (`animationOutputFormat`) unless `f:auto` picks again for the frame's size and alpha,
    /// and falls back to PNG (alpha) or JPEG when that one is read-only.
    func outputFormat(_ job: RenderJob, size: PixelSize, hasAlpha: Bool) -> ImageFormat {
        let output = job.request.output
        guard let chosen = job.outputFormat else {
            return output.resolvedFormat(source: job.format, accepted: job.accepted, size: size, hasAlpha: hasAlpha)
        }
        let written = output.format == .auto
            ? output.resolvedFormat(source: chosen, accepted: job.accepted, size: size, hasAlpha: hasAlpha)
            : chosen
        return written.isEncodable ? written : hasAlpha ? .png : .jpeg
    }
}
