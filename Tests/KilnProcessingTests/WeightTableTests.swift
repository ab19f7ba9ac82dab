import Testing
@testable import KilnProcessing

@Suite struct WeightTableTests {
    @Test(arguments: [(500, 0.0, 500.0, 300), (1920, 0.0, 1920.0, 800), (40, 0.0, 40.0, 160),
                      (375, 12.5, 350.25, 225), (7, 0.0, 7.0, 3), (1, 0.0, 1.0, 9), (4000, 500, 3000, 300)])
    func rowsAreNormalisedAndInBounds(source: Int, origin: Double, extent: Double, output: Int) {
        let table = WeightTable(sourceLength: source, origin: origin, extent: extent, outputLength: output)
        #expect(table.count == output)
        #expect(table.weights.count == output * table.taps)
        #expect(table.taps <= source)
        for i in 0..<output {
            #expect(table.starts[i] >= 0 && table.starts[i] + table.taps <= source)
            let row = table.weights[(i * table.taps)..<((i + 1) * table.taps)]
            #expect(abs(row.reduce(0, +) - 1) < 1e-5, "row \(i)")
        }
        // Starts never go backwards (the vertical pass relies on a contiguous row range).
        #expect(zip(table.starts, table.starts.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func downscalingWidensTheKernel() {
        let down = WeightTable(sourceLength: 4000, origin: 0, extent: 4000, outputLength: 500)
        let up = WeightTable(sourceLength: 500, origin: 0, extent: 500, outputLength: 4000)
        #expect(down.taps >= 48 && down.taps <= 50, "8× down reads 6 × 8 source pixels: \(down.taps)")
        #expect(up.taps >= 6 && up.taps <= 7, "upscaling keeps the 6-tap kernel: \(up.taps)")
    }

    @Test func sameSizeIsACopy() {
        let table = WeightTable(sourceLength: 300, origin: 0, extent: 300, outputLength: 300)
        #expect(table.isIdentity)
        #expect(!WeightTable(sourceLength: 300, origin: 0.5, extent: 299, outputLength: 300).isIdentity)
    }

    @Test func kernel() {
        #expect(WeightTable.lanczos3(0) == 1)
        for n in [1.0, 2.0, -1.0, -2.0, 3.0, 4.5] { #expect(abs(WeightTable.lanczos3(n)) < 1e-12) }
        #expect(WeightTable.lanczos3(1.5) < 0, "the first negative lobe")
        #expect(abs(WeightTable.lanczos3(0.5) - WeightTable.lanczos3(-0.5)) < 1e-15)
    }
}
