import KilnModel
import Testing
@testable import KilnOrigins
import KilnPipeline

/// The SSRF guard's address table: what an origin fetch may connect to.
@Suite struct OriginAddressPolicyTests {
    static func ip(_ s: String) -> [UInt8] { IPNetwork.parseAddress(s)! }
    let policy = OriginAddressPolicy()

    @Test(arguments: [
        "127.0.0.1", "127.255.255.254", "0.0.0.0", "0.1.2.3", "10.0.0.5", "172.16.0.1", "172.31.255.255",
        "192.168.1.1", "100.64.0.1", "100.127.255.254", "169.254.169.254", "192.0.0.170", "192.0.2.1",
        "198.18.0.1", "198.51.100.7", "203.0.113.9", "224.0.0.1", "239.255.255.250", "240.0.0.1",
        "255.255.255.255", "192.88.99.1",
        "::", "::1", "fc00::1", "fd12:3456::1", "fe80::1", "fec0::1", "ff02::1", "2001:db8::1",
        "100::1", "2001::1", "2001:10::1", "2001:20::1",
        // IPv6 forms that carry a special IPv4 address
        "::ffff:127.0.0.1", "::ffff:10.0.0.5", "::ffff:169.254.169.254", "::127.0.0.1",
        "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::c0a8:101", "2002:7f00:1::1", "2002:a00:5::",
    ])
    func specialAddressesAreRefused(_ address: String) {
        let why = policy.refusal(for: Self.ip(address))
        #expect(why != nil, "\(address) must be refused")
    }

    @Test(arguments: ["8.8.8.8", "1.1.1.1", "93.184.216.34", "172.32.0.1", "100.128.0.1", "2606:4700::1111",
                      "2a00:1450:4001::200e", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"])
    func globalAddressesArePermitted(_ address: String) {
        #expect(policy.refusal(for: Self.ip(address)) == nil, "\(address) is global")
    }

    @Test func theReasonNamesTheRange() {
        #expect(policy.refusal(for: Self.ip("127.0.0.1")) == "127.0.0.1 is loopback")
        #expect(policy.refusal(for: Self.ip("100.64.1.2")) == "100.64.1.2 is shared address space (CGNAT)")
        #expect(policy.refusal(for: Self.ip("::ffff:10.1.2.3")) == "::ffff:10.1.2.3 carries 10.1.2.3, which is private")
    }

    @Test func allowedNetworksOpenExactlyWhatTheySay() throws {
        let allowed = OriginAddressPolicy(allowedNetworks: try #require(IPNetwork.parseList("127.0.0.1, 10.20.0.0/16")))
        #expect(allowed.refusal(for: Self.ip("127.0.0.1")) == nil)
        #expect(allowed.refusal(for: Self.ip("::ffff:127.0.0.1")) == nil)   // the same host through a mapped address
        #expect(allowed.refusal(for: Self.ip("10.20.3.4")) == nil)
        #expect(allowed.refusal(for: Self.ip("127.0.0.2")) != nil)
        #expect(allowed.refusal(for: Self.ip("10.21.0.1")) != nil)
        #expect(allowed.refusal(for: Self.ip("::1")) != nil)                 // IPv6 loopback is another address
        #expect(allowed.refusal(for: Self.ip("169.254.169.254")) != nil)
    }

    @Test func embeddedIPv4IsFoundInEveryCarryingForm() {
        #expect(OriginAddressPolicy.embeddedIPv4(Self.ip("::ffff:1.2.3.4")) == [1, 2, 3, 4])
        #expect(OriginAddressPolicy.embeddedIPv4(Self.ip("::1.2.3.4")) == [1, 2, 3, 4])
        #expect(OriginAddressPolicy.embeddedIPv4(Self.ip("64:ff9b::102:304")) == [1, 2, 3, 4])
        #expect(OriginAddressPolicy.embeddedIPv4(Self.ip("64:ff9b:1:aaaa::102:304")) == [1, 2, 3, 4])
        #expect(OriginAddressPolicy.embeddedIPv4(Self.ip("2002:102:304::")) == [1, 2, 3, 4])
        #expect(OriginAddressPolicy.embeddedIPv4(Self.ip("2606:4700::1111")) == nil)
        #expect(OriginAddressPolicy.embeddedIPv4(Self.ip("1.2.3.4")) == nil)
    }
}
