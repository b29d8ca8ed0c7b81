// SPDX-License-Identifier: Apache-2.0
import CPamPatternLock
import Testing

@Suite("Remote logins")
struct RemoteTests {
    @Test(
        "a login from another host is remote",
        arguments: ["203.0.113.7", "client.example.org", "10.0.0.1", "::2", "localhost.evil.example", "127.0.0.2x"])
    func remoteHost(rhost: String) {
        #expect(pl_session_is_remote(rhost, "/dev/pts/1", "myhost"))
    }

    @Test(
        "no host, the loopback names and this host's own name are local",
        arguments: ["", "localhost", "LocalHost", "localhost.localdomain", "127.0.0.1", "::1", "::ffff:127.0.0.1", "myhost", "MYHOST"])
    func localHost(rhost: String) {
        #expect(!pl_session_is_remote(rhost, "/dev/pts/1", "myhost"))
    }

    @Test("no PAM_RHOST at all is local")
    func noHost() {
        #expect(!pl_session_is_remote(nil, nil, nil))
        #expect(!pl_session_is_remote(nil, "tty1", "myhost"))
    }

    @Test("sshd's tty marks a login remote whatever the host")
    func sshTTY() {
        #expect(pl_session_is_remote("127.0.0.1", "ssh", "myhost"))
        #expect(pl_session_is_remote(nil, "ssh", "myhost"))
        #expect(!pl_session_is_remote(nil, "sshd", "myhost"))
    }

    @Test("an unknown own host name makes only the loopback names local")
    func noHostname() {
        #expect(pl_session_is_remote("myhost", nil, ""))
        #expect(pl_session_is_remote("myhost", nil, nil))
    }
}
