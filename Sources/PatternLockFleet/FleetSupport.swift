// SPDX-License-Identifier: Apache-2.0

/// Whether this build can work with a fleet's database.
public enum FleetSupport {
    /// Why it cannot: the one sentence for every `db` command and `serve --store` in
    /// a daemon built without the PostgreSQL trait.
    public static let notBuilt = """
        This patternlockd was built without PostgreSQL support, so it cannot use --store postgresql://... \
        Run patternlockd-fleet instead: install the package patternlockd-postgresql, or build it with \
        make fleet and install it with make install FLEET=1. Or leave out --store to keep the records in --state-dir.
        """
}
