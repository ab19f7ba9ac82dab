import CWebP
import KilnModel

/// A parsed WebP container (libwebp's demuxer) over bytes that outlive it: canvas size, frame
/// count and metadata chunks, without decoding any image data.
///
/// `WebPDemux` needs the whole file: a truncated container is refused here, before decoding.
package final class WebPContainer {
    private let demuxer: OpaquePointer

    /// nil when the container is malformed or truncated. `bytes` must stay valid while this lives.
    package init?(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return nil }
        var data = WebPData(bytes: base.assumingMemoryBound(to: UInt8.self), size: bytes.count)
        guard let demuxer = WebPDemux(&data) else { return nil }
        self.demuxer = demuxer
    }

    deinit { WebPDemuxDelete(demuxer) }

    package var canvasWidth: Int { Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_WIDTH)) }
    package var canvasHeight: Int { Int(WebPDemuxGetI(demuxer, WEBP_FF_CANVAS_HEIGHT)) }
    package var frameCount: Int { Int(WebPDemuxGetI(demuxer, WEBP_FF_FRAME_COUNT)) }
    /// How often an animation plays: 0 forever (the ANIM chunk's loop count).
    var loopCount: Int { Int(WebPDemuxGetI(demuxer, WEBP_FF_LOOP_COUNT)) }

    /// Sum of the frames' durations in milliseconds (ANMF headers; no frame is decoded).
    var totalDurationMilliseconds: Int {
        var iterator = WebPIterator()
        guard WebPDemuxGetFrame(demuxer, 1, &iterator) != 0 else { return 0 }
        defer { WebPDemuxReleaseIterator(&iterator) }
        var total = 0
        repeat { total += Int(max(iterator.duration, 0)) } while WebPDemuxNextFrame(&iterator) != 0
        return total
    }

    /// The payload of the first chunk named `fourCC` ("EXIF", "ICCP", "XMP "), handed to `body`
    /// while the demuxer is alive; nil when absent.
    func withChunk<T>(_ fourCC: String, _ body: (UnsafeRawBufferPointer) -> T) -> T? {
        var iterator = WebPChunkIterator()
        guard WebPDemuxGetChunk(demuxer, fourCC, 1, &iterator) != 0 else { return nil }
        defer { WebPDemuxReleaseChunkIterator(&iterator) }
        guard let bytes = iterator.chunk.bytes, iterator.chunk.size > 0 else { return nil }
        return body(UnsafeRawBufferPointer(start: bytes, count: iterator.chunk.size))
    }

    /// EXIF orientation 1...8 from the "EXIF" chunk (TIFF bytes, "Exif\0\0" prefix tolerated).
    package var orientation: Int {
        withChunk("EXIF") { ExifOrientation.read($0) } ?? 1
    }

    /// The "ICCP" chunk's profile bytes.
    package var iccProfile: [UInt8]? {
        withChunk("ICCP") { Array($0) }
    }

    /// EXIF (TIFF bytes, any "Exif\0\0" prefix removed, orientation rewritten to 1) and XMP chunks.
    package var metadata: ImageMetadata? {
        let exif = withChunk("EXIF") { payload -> [UInt8] in
            let tiff = ExifOrientation.hasExifIdentifier(payload) ? UnsafeRawBufferPointer(rebasing: payload[6...]) : payload
            return ExifOrientation.resettingOrientation(Array(tiff))
        }
        let xmp = withChunk("XMP ") { Array($0) }
        return ImageMetadata(exif: exif?.isEmpty == false ? exif : nil, xmp: xmp).nonEmpty
    }

    /// True when the RIFF container has a VP8X chunk, the only kind that can carry EXIF, ICCP or animation.
    static func isExtended(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 16 && bytes[12] == 0x56 && bytes[13] == 0x50 && bytes[14] == 0x38 && bytes[15] == 0x58
    }
}
