// SPDX-License-Identifier: Apache-2.0
/// Breaks a message into lines no wider than `width`, given a function that
/// measures a string's width: whole words where they fit, a word wider than a
/// line broken between characters. Nothing is ever cut and no line is wider
/// (unless a single character is: then it stands alone). Line breaks in the text
/// are kept.
public func wrap(_ text: String, width: Double, measure: (String) -> Double) -> [String] {
    var lines: [String] = []
    for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
        var line = ""
        let words = paragraph.split(separator: " ", omittingEmptySubsequences: true)
        if words.isEmpty {
            lines.append("")
            continue
        }
        for word in words {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if measure(candidate) <= width {
                line = candidate
                continue
            }
            if !line.isEmpty {
                lines.append(line)
                line = ""
            }
            if measure(String(word)) <= width {
                line = String(word)
                continue
            }
            // A word wider than a line: as many characters as fit, then the rest.
            var piece = ""
            for ch in word {
                let next = piece + String(ch)
                if measure(next) > width && !piece.isEmpty {
                    lines.append(piece)
                    piece = String(ch)
                } else {
                    piece = next
                }
            }
            line = piece
        }
        lines.append(line)
    }
    return lines
}
