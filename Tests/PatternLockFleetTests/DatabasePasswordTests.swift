// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing
import PatternLock
import PatternLockFleet

/// A fresh private directory under /tmp, removed by `remove()`.
struct Scratch {
    let path: String

    init() throws {
        var template = Array("/tmp/plfleet-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw StoreError.refused("mkdtemp failed") }
        path = String(cString: made)
    }

    func write(_ name: String, _ text: String, mode: mode_t = 0o600) throws -> String {
        let file = "\(path)/\(name)"
        try text.write(toFile: file, atomically: false, encoding: .utf8)
        chmod(file, mode)
        return file
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

private func refusal(_ body: () throws(StoreError) -> String?) -> String? {
    do {
        _ = try body()
        return nil
    } catch {
        #expect(error.code == .refused)
        return error.reason
    }
}

@Suite struct DatabasePasswordFile {
    @Test func oneLineIsThePasswordWithoutItsLineEnd() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let lf = try dir.write("lf", "s3cret pass\n")
        let crlf = try dir.write("crlf", "s3cret pass\r\n", mode: 0o640)
        #expect(try DatabasePassword.read(file: lf, credentialsDirectory: nil) == "s3cret pass")
        #expect(try DatabasePassword.read(file: crlf, credentialsDirectory: nil) == "s3cret pass")
    }

    @Test func noFileAndNoCredentialMeansNoPassword() throws {
        #expect(try DatabasePassword.read(file: nil, credentialsDirectory: nil) == nil)
        #expect(try DatabasePassword.read(file: nil, credentialsDirectory: "") == nil)
    }

    @Test func theSystemdCredentialIsUsedInsteadOfTheFile() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let file = try dir.write("file", "from the file\n")
        let creds = try Scratch()
        defer { creds.remove() }
        _ = try creds.write(DatabasePassword.credentialName, "from the credential\n")
        #expect(try DatabasePassword.read(file: file, credentialsDirectory: creds.path) == "from the credential")
        // A credentials directory without the credential leaves the file in use.
        #expect(try DatabasePassword.read(file: file, credentialsDirectory: dir.path) == "from the file")
    }

    @Test func aFileOthersMayReadOrItsGroupMayChangeIsRefusedWithTheChmodThatFixesIt() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        for mode: mode_t in [0o644, 0o604, 0o660, 0o620] {
            let file = try dir.write("mode\(String(mode, radix: 8))", "pw\n", mode: mode)
            let said = refusal { () throws(StoreError) in try DatabasePassword.read(file: file, credentialsDirectory: nil) }
            #expect(
                said
                    == "The database password file \(file) may be read by others or changed by its group (mode \(String(mode, radix: 8))). Fix it with: chmod 600 \(file)"
            )
        }
    }

    @Test func aFileOfAnotherUserIsRefusedWithTheChownThatFixesIt() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let file = try dir.write("theirs", "pw\n")
        // As root the file is given away; otherwise it is ours and the daemon's user is another.
        let owner: uid_t
        if geteuid() == 0 {
            #expect(chown(file, 4242, 0) == 0)
            owner = 0
        } else {
            owner = geteuid() + 1
        }
        var st = stat()
        #expect(stat(file, &st) == 0)
        let said = refusal { () throws(StoreError) in
            try DatabasePassword.read(file: file, credentialsDirectory: nil, owner: owner)
        }
        #expect(
            said
                == "The database password file \(file) belongs to uid \(st.st_uid), not to root or the daemon's user. Fix it with: chown root \(file)"
        )
    }

    @Test func aSymbolicLinkIsRefusedEvenToAGoodFile() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let target = try dir.write("target", "pw\n")
        let link = "\(dir.path)/link"
        #expect(symlink(target, link) == 0)
        let said = refusal { () throws(StoreError) in try DatabasePassword.read(file: link, credentialsDirectory: nil) }
        #expect(said?.hasPrefix("Cannot open the database password file \(link): ") == true)
        #expect(said?.hasSuffix("Create it with the role's password on one line, mode 0600.") == true)
    }

    @Test func aMissingFileNamesHowToCreateIt() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let said = refusal { () throws(StoreError) in
            try DatabasePassword.read(file: "\(dir.path)/absent", credentialsDirectory: nil)
        }
        #expect(said?.hasSuffix("Create it with the role's password on one line, mode 0600.") == true)
    }

    @Test func aDirectoryIsNoPasswordFile() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let sub = "\(dir.path)/sub"
        #expect(mkdir(sub, 0o700) == 0)
        let said = refusal { () throws(StoreError) in try DatabasePassword.read(file: sub, credentialsDirectory: nil) }
        #expect(said == "The database password file \(sub) is not a regular file.")
    }

    @Test func anEmptyALongOrANonUTF8FileIsRefused() throws {
        let dir = try Scratch()
        defer { dir.remove() }
        let empty = try dir.write("empty", "\n\r\n")
        #expect(
            refusal { () throws(StoreError) in try DatabasePassword.read(file: empty, credentialsDirectory: nil) }
                == "The database password file \(empty) is empty or not UTF-8.")
        let longest = try dir.write("longest", String(repeating: "p", count: DatabasePassword.maximumLength))
        #expect(try DatabasePassword.read(file: longest, credentialsDirectory: nil)?.count == DatabasePassword.maximumLength)
        let long = try dir.write("long", String(repeating: "p", count: DatabasePassword.maximumLength + 1))
        #expect(
            refusal { () throws(StoreError) in try DatabasePassword.read(file: long, credentialsDirectory: nil) }
                == "The database password file \(long) cannot be read or is longer than 1024 bytes.")
        let latin1 = "\(dir.path)/latin1"
        FileManager.default.createFile(atPath: latin1, contents: Data([0x70, 0xE9, 0x0A]))
        chmod(latin1, 0o600)
        #expect(
            refusal { () throws(StoreError) in try DatabasePassword.read(file: latin1, credentialsDirectory: nil) }
                == "The database password file \(latin1) is empty or not UTF-8.")
    }
}
