import Glibc
import KilnModel
import Testing
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnServer

@Suite struct SettingsSnapshotTests {
    func sample() -> ConfigValues {
        var v = ConfigValues()
        v.merge(["server.workers": "3", "source.root": "/srv/images"], origin: "file /etc/kiln.conf")
        v.merge(["http.cache_control": "public, max-age=60"], origin: "environment KILN_HTTP_CACHE_CONTROL")
        v.merge(["server.pid_file": ""], origin: "--set")
        v.merge(["output.background": "ffé=x"], origin: "--set")
        return v
    }

    @Test func roundTripKeepsValuesAndOrigins() throws {
        let v = sample()
        let back = try SettingsSnapshot.decode(SettingsSnapshot.encode(v))
        #expect(back.values == v.values)
        #expect(back.origins == v.origins)
        #expect(try SettingsSnapshot.decode([]).values.isEmpty)
    }

    @Test func damagedSnapshotIsRejected() {
        #expect(throws: ConfigError.self) { try SettingsSnapshot.decode(Array("a\0b\0".utf8)) }
        #expect(throws: ConfigError.self) { try SettingsSnapshot.decode(Array("a\0b\0c".utf8)) }
    }

    @Test func sealedMemoryFile() throws {
        let fd = try SettingsSnapshot.makeFile(sample())
        #expect(fd >= 4)
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
        #expect(pwrite(fd, "x", 1, 0) == -1)          // sealed: nobody can change what workers read
        let copy = dup(fd)
        close(fd)
        let back = try SettingsSnapshot.read(fd: copy)
        #expect(back.values == sample().values)
    }
}
