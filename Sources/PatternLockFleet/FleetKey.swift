// SPDX-License-Identifier: Apache-2.0
import PatternLock

/// The fleet's key on one host, for the `db` commands.
public enum FleetKey {
    /// Loads the pepper for a fleet host: it must exist (every host gets a copy of
    /// the fleet's key; a new one here would not match the others).
    public static func pepper(keyFile: String) throws -> Pepper {
        let key = KeyFile.resolvePath(configured: keyFile)
        // `serve` would make a new key here, and a new key never matches the fleet's.
        if !key.isCredential, case .failure(let e) = Sys.lstat(key.path), e == .noEntry {
            throw StoreError.refused(
                "The key file \(key.path) does not exist. Every host of a fleet uses the fleet's one key: copy it here from a host of the fleet (mode 0600, owned by root), or give its path with --key-file FILE. Do not start patternlockd serve to create one: a new key would not match the fleet's."
            )
        }
        return try KeyFile.load(path: key.path, create: false, isCredential: key.isCredential)
    }
}
