// SPDX-License-Identifier: Apache-2.0
import PatternLock
import PatternLockWire

/// Authorizes a request by the peer's uid (docs/PROTOCOL.md, each verb's "Allowed to"; root may do anything;
/// uid U may verify, see and change only its own user) and runs it on the service.
package struct RequestHandler: Sendable {
    package let service: PatternService
    /// Applied to every new or changed pattern (docs/GUESSING.md); never to a verify.
    package let policy: EnrollPolicy
    /// Who a peer's uid is, and whether an account exists (the password database,
    /// or a test's own table).
    package let accounts: AccountLookup
    /// Who checks a user's password before its first pattern (polkit, or a test's own).
    package let proof: PasswordProof

    package init(service: PatternService, policy: EnrollPolicy, accounts: AccountLookup = .system, proof: PasswordProof = .polkit) {
        self.service = service
        self.policy = policy
        self.accounts = accounts
        self.proof = proof
    }

    /// Runs one request and writes its replies through `writer`, with one log line
    /// (never a pattern). Every request is answered once, the moment its answer is
    /// known, and logged before it is answered, except the one answer that comes
    /// before its bookkeeping: a VERIFY's right pattern, which the service answers
    /// before the write that clears its count, and which is logged once that write
    /// is durable, before any re-hash (a crash during the re-hash loses nothing the
    /// log shows).
    ///
    /// `peer` is the connecting process, which a user's first pattern needs a proof
    /// of the password about; `hangUp` the connection, watched while the proof waits.
    package func handle(
        _ request: Request, peerUID: UInt32, peer: PeerProcess? = nil, hangUp: Int32 = -1, writer: some ReplyWriter
    ) {
        let isRoot = peerUID == 0
        let peerName = isRoot ? "root" : accounts.peerName(peerUID)
        // Byte for byte: who someone is is never decided by Unicode equivalence.
        func isSelf(_ user: String) -> Bool { peerName.map { UserName.same($0, user) } ?? false }
        if let replies = immediate(request) {
            writer.write(replies)
            return
        }
        var replies: [Reply]
        var logFields: [String] = []
        switch request {
        case .ping, .check:
            return  // answered above

        case .status(let user, let claimed):
            // The PAM module asks STATUS before every prompt: a STATUS that shows a
            // lock is how an attempt on a locked user reaches the log, culprit and all.
            logFields = [Log.field("user", user)] + (claimed.map { callerFields(Self.caller(claimed: $0, peerUID: peerUID)) } ?? [])
            guard isRoot || isSelf(user) else { replies = [.denied]; break }
            do throws(StoreError) { replies = [.status(try service.status(user: user))] } catch {
                replies = [Self.storeError(error, log: &logFields)]
            }

        case .verify(let user, let pattern, let claimedContext):
            var context = claimedContext
            context.caller = Self.caller(claimed: claimedContext.caller, peerUID: peerUID)
            logFields =
                [
                    Log.field("user", user), Log.field("service", context.service), Log.field("tty", context.tty),
                    Log.field("rhost", context.rhost), Log.field("ruser", context.ruser),
                ] + callerFields(context.caller)
            guard isRoot || isSelf(user) else { replies = [.denied]; break }
            service.verify(
                user: user, typed: pattern, context: context, uid: peerUID,
                writer: VerifyReplies(
                    handler: self, request: request, pattern: pattern, logFields: logFields, peerUID: peerUID, writer: writer))
            return

        case .enroll(let user, let pattern, let current, let iterations, let override):
            logFields = [Log.field("user", user)]
            if isRoot {
                guard accounts.uid(user) != nil else { replies = [.error(.noSuchUser)]; break }
            } else {
                // The name and the uid: where two accounts share a name (files and
                // LDAP), the password proof is about the peer's uid, so the record
                // must be that uid's.
                guard isSelf(user), accounts.uid(user) == peerUID else { replies = [.denied]; break }
                // A chosen count costs the daemon's CPU (up to 10^9 iterations), so
                // only root may choose one.
                guard iterations == nil else { replies = [.error(.iterationsRootOnly)]; break }
            }
            // Refused before anything is counted; only root may override, and it is logged.
            guard !override || isRoot else { replies = [.error(.overrideRootOnly)]; break }
            if let refusal = policy.refusal(typed: pattern) {
                guard override else { replies = [.refused(refusal)]; break }
                logFields.append("policy=overridden")
            }
            var proven = false
            if !isRoot {
                // Nobody is asked for a password for an entry that is not a pattern.
                do { _ = try Pattern(typed: pattern) } catch { replies = [.invalid(InvalidReason(error))]; break }
                let gate = selfEnrollmentGate(user: user, peer: peer, hangUp: hangUp, log: &logFields)
                if case .refuse(let reply) = gate { replies = [reply]; break }
                if case .proceed(true) = gate { proven = true }
            }
            let outcome = service.enroll(
                user: user, typed: pattern, current: current, iterations: iterations,
                byAdministrator: isRoot, firstEnrollmentProven: proven,
                context: AttemptContext(service: "patternlockd-enroll", caller: Caller(uid: peerUID)), uid: peerUID)
            replies = [outcome == .ok ? .okIterations(iterations ?? service.targetIterations) : Reply(outcome)]

        case .remove(let user, let current):
            logFields = [Log.field("user", user)]
            guard isRoot || isSelf(user) else { replies = [.denied]; break }
            replies = [
                Reply(
                    service.remove(
                        user: user, current: current, byAdministrator: isRoot,
                        context: AttemptContext(service: "patternlockd-remove", caller: Caller(uid: peerUID)), uid: peerUID))
            ]

        case .reset(let user):
            logFields = [Log.field("user", user)]
            guard isRoot else { replies = [.denied]; break }
            do throws(StoreError) {
                replies = [try service.reset(user: user).map { .okReset(count: $0.cleared, locked: $0.locked) } ?? .notEnrolled]
            } catch {
                replies = [Self.storeError(error, log: &logFields)]
            }

        case .resetAll:
            logFields = ["all=1"]
            guard isRoot else { replies = [.denied]; break }
            do throws(StoreError) {
                let n = try service.resetAll()
                replies = [.okReset(count: n.cleared, locked: n.locked)]
            } catch {
                replies = [Self.storeError(error, log: &logFields)]
            }

        case .list:
            guard isRoot else { replies = [.denied]; break }
            do throws(StoreError) { replies = try service.users().map { .user($0) } + [.end] } catch {
                replies = [Self.storeError(error, log: &logFields)]
            }
        }

        log(request, logFields, replies: replies, peerUID: peerUID)
        writer.write(replies)
    }

    /// The replies to a request that needs no user's lock and leaves no line in
    /// the log: PING, and CHECK, which anyone may ask (the answer is about the
    /// policy, never about a record). Its verdicts are not logged, nor that it
    /// was asked: the setup window asks one for every dot as a pattern is drawn,
    /// so the verdicts on the beginnings of the pattern then set would narrow it
    /// down for whoever reads the log, and one user's flood of them would fill
    /// it. nil for every other request.
    package func immediate(_ request: Request) -> [Reply]? {
        switch request {
        case .ping: return [.pong]
        case .check(let pattern): return [policy.refusal(typed: pattern).map { .refused($0) } ?? .ok]
        default: return nil
        }
    }

    /// A VERIFY's verdict, written through the service: the reply goes out through
    /// the connection's writer when the service answers, and the log line is written
    /// when the verdict is settled.
    private struct VerifyReplies<Writer: ReplyWriter>: VerdictWriter {
        let handler: RequestHandler
        let request: Request
        let pattern: SecretBytes
        let logFields: [String]
        let peerUID: UInt32
        let writer: Writer

        func answer(_ verdict: PatternService.Verdict) {
            writer.write([handler.policy.verifyReply(verdict.outcome, typed: pattern)])
        }

        func settled(_ verdict: PatternService.Verdict) {
            // A right pattern is answered before its bookkeeping, and logged after it.
            let early = verdict.outcome == .ok ? ["answered=early"] : []
            handler.log(
                request, logFields + early + handler.hashField(verdict.hashMilliseconds),
                replies: [handler.policy.verifyReply(verdict.outcome, typed: pattern)], peerUID: peerUID)
        }
    }

    private enum Gate {
        /// Go on to `enroll`; `proven`: the password was checked for a first pattern.
        case proceed(proven: Bool)
        case refuse(Reply)
    }

    /// Whether a user (not root) may go on to set its own pattern: a change goes on
    /// (`enroll` checks the current pattern); a first pattern only once the password
    /// has been proven. Asked before the user's lock is taken, so a password dialog
    /// never holds it; `enroll` looks at the record again under the lock.
    private func selfEnrollmentGate(user: String, peer: PeerProcess?, hangUp: Int32, log: inout [String]) -> Gate {
        switch service.selfEnrollment(user: user) {
        case .refused(let e): return .refuse(.error(ErrorCode(e)))
        case .change: return .proceed(proven: false)
        case .first:
            switch proof.check(peer, hangUp) {
            case .proven:
                log.append("password_proof=proven")
                return .proceed(proven: true)
            case .refused(let why):
                log.append(Log.field("password_proof", "refused: " + why))
                return .refuse(.error(.passwordProofRequired))
            case .unavailable(let why):
                log.append(Log.field("password_proof", "unavailable: " + why))
                return .refuse(.error(.passwordProofUnavailable))
            case .inProgress(let why):
                log.append(Log.field("password_proof", "in progress: " + why))
                return .refuse(.error(.passwordProofInProgress))
            }
        }
    }

    /// Who asks. A root peer is a program that runs PAM (sudo, su, login,
    /// polkit-agent-helper-1, a screen locker's helper): the module inside it names
    /// the real uid of that program, the invoking user. Any other peer is its own
    /// caller, whatever it sends. The session and seat are the module's report.
    package static func caller(claimed: Caller?, peerUID: UInt32) -> Caller {
        var caller = claimed ?? Caller(uid: peerUID)
        if peerUID != 0 { caller.uid = peerUID }
        return caller
    }

    /// `caller=UID caller_user=NAME session=S seat=T` for the log: the uid is the
    /// daemon's to trust (see `caller(claimed:peerUID:)`), the name its account.
    private func callerFields(_ caller: Caller?) -> [String] {
        guard let caller else { return [] }
        return [Log.field("caller", String(caller.uid))]
            + (accounts.peerName(caller.uid).map { [Log.field("caller_user", $0)] } ?? [])
            + [Log.field("session", caller.session), Log.field("seat", caller.seat)]
    }

    /// A store's failure, as every verb answers it (`ErrorCode(_: StoreError.Code)`),
    /// and its sentence for the log: the client is told to look there, and the log
    /// says which record and why (`why="Cannot open the record of alice: Permission denied."`).
    static func storeError(_ error: StoreError, log: inout [String]) -> Reply {
        log.append(Log.field("why", error.reason))
        return .error(ErrorCode(error.code))
    }

    private func hashField(_ milliseconds: Double?) -> [String] {
        milliseconds.map { ["hash_ms=\(Double(Int($0 * 10)) / 10)"] } ?? []
    }

    private func log(_ request: Request, _ fields: [String], replies: [Reply], peerUID: UInt32) {
        // A LIST that worked holds nothing new; one that failed is worth a line.
        if case .list = request, replies.last == .end { return }
        // STATUS replies are long and hold nothing new; log their verb only.
        let result =
            replies.first.map {
                if case .status(let s) = $0 { return s.locked ? "STATUS locked=1" : "STATUS" } else { return $0.logLine }
            } ?? ""
        let line =
            ([request.verb.lowercased()] + fields + [
                Log.field("uid", String(peerUID)),
                "result=\(result.split(separator: " ").joined(separator: ","))",
            ]).joined(separator: " ")
        // Within the peer's budget (`LogBudget`): one user's flood cannot push
        // another's lines out of the journal.
        Log.write(Self.priority(of: replies.first), line, from: peerUID)
    }

    /// Warning for what an administrator looks for with `journalctl -p warning`: a
    /// failure that locks, an attempt on a locked user, a request refused to its
    /// sender (a first pattern without a proof of the password included). The PAM
    /// module and `verify` ask STATUS first and stop at a lock, so a STATUS that
    /// shows a lock is how an attempt on a locked user reaches the log. Everything
    /// else is information.
    package static func priority(of reply: Reply?) -> Log.Level {
        switch reply {
        case .fail(0, _)?, .locked?, .denied?, .okMovedAside?: return .warning
        case .error(.passwordProofRequired)?, .error(.passwordProofUnavailable)?, .error(.passwordProofInProgress)?:
            return .warning
        case .status(let s)? where s.locked: return .warning
        default: return .info
        }
    }
}
