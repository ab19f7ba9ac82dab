import KilnCodecs
import KilnModel
import KilnProcessing

/// The decode step of `render` (`RenderStep.decode`): the frames the kind names, each converted
/// to sRGB, oriented and processed (`processFrame`).
///
/// - A still decodes once, shrinking on load when a resize comes first (`admit` chose the size).
/// - An animation's frames stream: each is decoded composited onto the canvas, processed and
///   handed to the encoder (`addFrame`), then dropped. Memory is the decoder's canvas, one frame
///   in flight and the encoder's state (encoded frames only), whatever the frame count. For one
///   frame as a still, the frames before it are composited only and the decode stops after it.
/// - A document's placeholders come from one small decode, fitted within `placeholderSide`.
extension ImagePipeline {
    func decodeFrames(_ job: RenderJob) throws {
        let header = job.readHeader
        switch job.kind.frames {
        case .still:
            guard let options = job.decodeOptions, let decoder = job.decoder else { preconditionFailure("admit chooses the decode") }
            let decoded = try job.ofSource {
                try decodeMarked(job.source) {
                    try observer?.enter(.decode)
                    return try decoder.decode(job.data, options: options)
                }
            }
            job.mark(.decoded)
            job.metadata = decoded.metadata
            job.picked = try processFrame(decoded.buffer, index: nil, iccProfile: decoded.iccProfile, job: job)
        case .every, .only:
            try decodeAnimation(job, canvas: header.displayedSize)
        }
        job.mark(.processed)
    }

    /// Streams an animation's frames through `processFrame`: every frame to the encoder, or frame n
    /// kept as the still.
    func decodeAnimation(_ job: RenderJob, canvas: PixelSize) throws {
        guard let decoder = job.animationDecoder, let info = job.animation else {
            preconditionFailure("an animation's decoder is found by the header step")
        }
        let only: Int? = if case .only(let n) = job.kind.frames { n } else { nil }
        try observer?.enter(.decode)
        do {
            // A kill while a frame is processed or encoded is the variant's, not the source's.
            try decodeMarked(job.source, stepwise: { marking in
                try decoder.decodeFrames(job.data) { frame in
                    if let only, frame.index < only { return true }   // composited only
                    return try marking.outsideDecode {
                        let image = try self.processFrame(frame.buffer, index: frame.index, iccProfile: info.iccProfile, job: job)
                        guard only == nil else {
                            job.picked = image
                            return false
                        }
                        try self.addFrame(image, index: frame.index, durationMilliseconds: frame.durationMilliseconds,
                                          loopCount: info.loopCount, job: job)
                        return true
                    }
                }
            })
        } catch let error as DecodeError where job.source != nil {
            throw SourceFault(error)   // the decoder's (the frames' own steps throw other errors)
        }
        if only != nil && job.picked == nil { throw DecodeError.corrupt("the animation has no frame \(only ?? 0)") }
    }

    /// One frame through colour conversion, orientation and the kind's processing. `trim` finds its
    /// box on the first frame processed and cuts every later frame to the same box, so that all
    /// frames of an animation keep one size. `index`: the frame's, for an animation.
    func processFrame(_ frame: PixelBuffer, index: Int?, iccProfile: [UInt8]?, job: RenderJob) throws -> PixelBuffer {
        var image = frame
        if let iccProfile {
            // icc:keep: a still image's RGB profile stays with its pixels into the encoder.
            if index == nil, job.kind.product == .image, !job.kind.isAnimated, ICCProfile.isRGB(iccProfile),
               output.keepsProfile(for: job.request.output) {
                job.keptProfile = iccProfile
            } else {
                try observer?.enter(.colour)
                image = stages.colorConverter.convertToSRGB(image, profile: iccProfile)
                job.mark(.coloured)
            }
        }
        let orientation = job.readHeader.orientation
        if orientation != 1 { image = stages.orienter.orient(image, exifOrientation: orientation) }
        switch job.kind.processing {
        case .request:
            var logical = job.readHeader.displayedSize
            for operation in job.request.operations {
                try observer?.enter(.process, detail: index.map { "\(operation.identifier) frame \($0)" } ?? operation.identifier)
                if case .trim(let options) = operation {
                    let box = job.trimBox ?? Trim(options).box(in: image) ?? (0, 0, image.width, image.height)
                    job.trimBox = box
                    image = Crop.cut(image, x: box.x, y: box.y, width: box.width, height: box.height)
                } else {
                    let context = ProcessingContext(logicalSize: logical, maxOutputPixels: limits.maxOutputPixels)
                    image = try stages.processors.processor(for: operation).process(image, context: context)
                }
                logical = image.size
            }
        case .fitWithin(let side):
            guard image.width > side || image.height > side else { break }
            try observer?.enter(.process, detail: "resize")
            let context = ProcessingContext(logicalSize: image.size, maxOutputPixels: limits.maxOutputPixels)
            image = try stages.processors.processor(for: Self.placeholderPlan.operations[0]).process(image, context: context)
        }
        return image
    }

    /// Hands a processed frame to the animation encoder, begun with the first frame's size.
    func addFrame(_ image: PixelBuffer, index: Int, durationMilliseconds: Int, loopCount: Int, job: RenderJob) throws {
        if job.sink == nil {
            guard let outputFormat = job.outputFormat else { preconditionFailure("admit chooses an animation's format") }
            try ImagePipeline.checkFormatLimit(outputFormat, size: image.size)
            guard let encoder = stages.animations.animationEncoder(for: outputFormat) else {
                throw EncodeError.failed("no animation encoder for \(outputFormat.displayName)")
            }
            let options = output.encodeOptions(format: outputFormat, request: job.request.output, metadata: nil)
            job.sink = try encoder.begin(size: image.size, loopCount: loopCount, options: options)
            job.frameSize = image.size
        }
        try observer?.enter(.encode, detail: "frame \(index)")
        try job.sink?.add(image, durationMilliseconds: durationMilliseconds)
    }
}
