// SPDX-License-Identifier: Apache-2.0
/// Where an attempt comes from, as PAM reports it.
public struct AttemptContext: Equatable, Sendable {
    public var service: String
    public var tty: String
    public var rhost: String
    public var ruser: String

    public init(service: String = "", tty: String = "", rhost: String = "", ruser: String = "") {
        self.service = service
        self.tty = tty
        self.rhost = rhost
        self.ruser = ruser
    }
}
