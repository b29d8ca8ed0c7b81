// SPDX-License-Identifier: Apache-2.0
/// The 8 symmetries of the square grid (4 rotations, each with or without a
/// mirror). An attacker who learns that an L from the top-left is refused tries
/// its mirror next, so the enroll policy refuses a shape in every orientation.
public enum GridSymmetry: Int, CaseIterable, Sendable {
    case identity, rotate90, rotate180, rotate270, mirrorLeftRight, mirrorTopBottom, transpose, antiTranspose

    /// Where this symmetry sends a dot (1…9, phone layout).
    public func map(_ dot: Int) -> Int {
        let (r, c) = ((dot - 1) / 3, (dot - 1) % 3)
        let (r2, c2): (Int, Int)
        switch self {
        case .identity: (r2, c2) = (r, c)
        case .rotate90: (r2, c2) = (c, 2 - r)
        case .rotate180: (r2, c2) = (2 - r, 2 - c)
        case .rotate270: (r2, c2) = (2 - c, r)
        case .mirrorLeftRight: (r2, c2) = (r, 2 - c)
        case .mirrorTopBottom: (r2, c2) = (2 - r, c)
        case .transpose: (r2, c2) = (c, r)
        case .antiTranspose: (r2, c2) = (2 - c, 2 - r)
        }
        return r2 * 3 + c2 + 1
    }

    /// The image of a pattern's dots. A symmetry keeps the pass-over rule, so the
    /// image of a valid pattern is a valid pattern.
    public func map(_ dots: [Int]) -> [Int] { dots.map { map($0) } }
}
