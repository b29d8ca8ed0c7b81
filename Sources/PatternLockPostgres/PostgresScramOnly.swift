// SPDX-License-Identifier: Apache-2.0
#if PostgreSQL
import PostgresNIO
import Synchronization

/// Why a connection was refused before the password left this host: set by
/// `ScramOnly` on the channel's event loop, read by whoever waited for the
/// connection.
final class AuthRefusal: Sendable {
    let sentence = Mutex<String?>(nil)
}

/// Sits between the wire (after TLS) and postgres-nio until the server says the
/// role is authenticated, and lets through no request for the password but
/// SCRAM-SHA-256's. postgres-nio answers a request for a cleartext or MD5 password
/// with the password and has no option to refuse one; such a request, or any other
/// method, never reaches it: the connection is closed and `refusal` says why.
///
/// Backend messages are a type byte and a length (int32, itself included); an
/// authentication request is 'R' with an int32 code: 0 done, 3 cleartext, 5 MD5,
/// 10/11/12 SASL (SCRAM-SHA-256) start, continue, final. Each message is passed on
/// only once it is whole and judged. With TLS the handler starts at the pipeline's
/// head, where it sees the server's one-byte answer to postgres-nio's SSLRequest:
/// after an 'S' postgres-nio puts NIOSSLClientHandler in the pipeline (synchronously,
/// in that read), and the handler moves behind it, where the messages are plaintext.
/// The answer is one byte and a server sends nothing more until the client speaks:
/// a read that holds more after an 'S' or an 'N' holds bytes nobody can vouch for
/// (a man in the middle's plaintext ahead of TLS), so the connection is closed, as
/// libpq does since CVE-2021-23222, before any of it reaches postgres-nio.
final class ScramOnly: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// `refused`: the connection is closing and nothing more reaches postgres-nio
    /// (over TLS, NIOSSL may still pass on data while its close_notify goes out).
    private enum Phase { case tlsAnswer, authentication, done, refused }
    private var phase: Phase
    private var pending: ByteBuffer?
    private let refusal: AuthRefusal
    private let place: String
    private let role: String
    /// An authentication exchange is a few small messages; a server sending more is not one.
    private static let largestMessage = 64 << 10

    init(tls: Bool, refusal: AuthRefusal, place: String, role: String) {
        phase = tls ? .tlsAnswer : .authentication
        self.refusal = refusal
        self.place = place
        self.role = role
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch phase {
        case .refused:
            return
        case .done:
            context.fireChannelRead(data)
        case .tlsAnswer:
            tlsAnswer(context: context, data: data)
        case .authentication:
            var bytes = unwrapInboundIn(data)
            if var before = pending {
                pending = nil  // one owner: no copy on write
                before.writeBuffer(&bytes)
                pending = before
            } else {
                pending = bytes
            }
            judge(context: context)
        }
    }

    private func tlsAnswer(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self)
        let answered = first == UInt8(ascii: "S") || first == UInt8(ascii: "N")
        guard !answered || bytes.readableBytes == 1 else {
            refuse(context: context, Self.afterTheAnswer(bytes.readableBytes - 1, place: place))
            return
        }
        guard first == UInt8(ascii: "S") else {
            phase = .authentication
            if answered {
                // 'N': postgres-nio, which requires TLS here, ends the connection.
                context.fireChannelRead(data)
            } else {
                // A message (an error from a server that takes no SSLRequest): judged like any other.
                channelRead(context: context, data: data)
            }
            return
        }
        context.fireChannelRead(data)
        do {
            let tls = try context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
            let behind = ScramOnly(tls: false, refusal: refusal, place: place, role: role)
            try context.pipeline.syncOperations.addHandler(behind, position: .after(tls))
            phase = .done
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } catch {
            refuse(
                context: context,
                "The connection to the database at \(place) could not be checked after TLS began (\(error)); the password was not sent."
            )
        }
    }

    private func judge(context: ChannelHandlerContext) {
        while phase == .authentication, var buffer = pending, buffer.readableBytes >= 5 {
            let start = buffer.readerIndex
            let type = buffer.getInteger(at: start, as: UInt8.self) ?? 0
            let length = Int(buffer.getInteger(at: start + 1, as: Int32.self) ?? 0)
            guard length >= 4, length <= Self.largestMessage else {
                refuse(
                    context: context,
                    "The database at \(place) sent something that is not a PostgreSQL message before authentication; the password was not sent."
                )
                return
            }
            guard buffer.readableBytes >= 1 + length else { return }
            if type == UInt8(ascii: "R") {
                let code = length >= 8 ? buffer.getInteger(at: start + 5, as: Int32.self) ?? -1 : -1
                switch code {
                case 0: phase = .done  // authenticated: the rest is postgres-nio's
                case 10, 11, 12: break  // SASL: SCRAM-SHA-256, the one way the password is sent
                default:
                    refuse(context: context, Self.sentence(code: code, place: place, role: role))
                    return
                }
            }
            guard let message = buffer.readSlice(length: 1 + length) else { return }
            pending = buffer.readableBytes > 0 ? buffer : nil
            context.fireChannelRead(wrapInboundOut(message))
        }
        if phase == .done, let rest = pending {
            pending = nil
            context.fireChannelRead(wrapInboundOut(rest))
        }
    }

    private func refuse(context: ChannelHandlerContext, _ why: String) {
        refusal.sentence.withLock { $0 = $0 ?? why }
        pending = nil
        phase = .refused
        context.close(promise: nil)
    }

    /// What the administrator reads when the server's answer to the request for TLS came with more.
    static func afterTheAnswer(_ extra: Int, place: String) -> String {
        "The database at \(place) sent more than its one-byte answer to the request for TLS (\(extra) byte\(extra == 1 ? "" : "s") more in the same read), which no PostgreSQL server does and a man in the middle does to put its own message ahead of TLS: the connection was closed and the password was not sent. Check what stands between this host and the database."
    }

    /// What the administrator reads when the server asks for the password any other way than SCRAM-SHA-256.
    static func sentence(code: Int32, place: String, role: String) -> String {
        let how: String
        switch code {
        case 3: how = "in clear text"
        case 5: how = "as an MD5 hash"
        default: how = "by a method other than SCRAM-SHA-256 (authentication request \(code))"
        }
        return
            "The database at \(place) asked role \(role) for its password \(how): patternlockd sends the password only by SCRAM-SHA-256, and did not send it. If that is your PostgreSQL server, set password_encryption = scram-sha-256, set the role's password again (ALTER ROLE \(role) PASSWORD ...), and give this host's line in pg_hba.conf the method scram-sha-256; if it is not, something else is answering in the database's place."
    }
}
#endif
