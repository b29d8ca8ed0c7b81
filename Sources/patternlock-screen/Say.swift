// SPDX-License-Identifier: Apache-2.0
import PatternLockPainting

/// Writes a line to stderr: `patternlock-screen: ` and `text`.
func say(_ text: String) { sayLine("patternlock-screen", text) }
