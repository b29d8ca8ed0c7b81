// SPDX-License-Identifier: Apache-2.0
/// A shape people draw on purpose — a letter, a digit, a square, straight
/// strokes — given by the patterns that draw it in one orientation. The model
/// adds every rotation and mirror image and the same strokes drawn backwards.
public struct ShapeFamily: Sendable, Equatable {
    /// A word for the protocol and logs ("letter_L").
    public let id: String
    /// How a sentence names it: "an L".
    public let phrase: String
    /// Its rough share among people who draw a shape. Only names a shape in the
    /// refusal sentence: the fitted model (docs/GUESSING.md) learns shapes from the
    /// public data, not from this list.
    public let weight: Double
    /// Normalized digits, one orientation.
    public let drawings: [String]

    public init(id: String, phrase: String, weight: Double, drawings: [String]) {
        self.id = id
        self.phrase = phrase
        self.weight = weight
        self.drawings = drawings
    }

    /// The shapes of Løge 2015 (letters L, Z, N, M, S, C, U, digit 7 most common),
    /// Andriotis et al. 2013 (squares, lines) and the diamond, common in the public
    /// data (docs/GUESSING.md). Used to name a refused shape.
    public static let published: [ShapeFamily] = [
        ShapeFamily(id: "letter_L", phrase: "an L", weight: 0.20, drawings: ["14789", "1478", "25896", "2589"]),
        ShapeFamily(id: "letter_Z", phrase: "a Z", weight: 0.12, drawings: ["1235789"]),
        ShapeFamily(id: "letter_N", phrase: "an N", weight: 0.07, drawings: ["7415963"]),
        ShapeFamily(id: "letter_M", phrase: "an M", weight: 0.06, drawings: ["7415369"]),
        ShapeFamily(id: "letter_S", phrase: "an S", weight: 0.06, drawings: ["321456987"]),
        ShapeFamily(id: "letter_C", phrase: "a C", weight: 0.07, drawings: ["3214789"]),
        ShapeFamily(id: "letter_U", phrase: "a U", weight: 0.06, drawings: ["1478963"]),
        ShapeFamily(id: "letter_V", phrase: "a V", weight: 0.02, drawings: ["14863"]),
        ShapeFamily(id: "digit_7", phrase: "a 7", weight: 0.10, drawings: ["12357", "12369", "1236"]),
        ShapeFamily(id: "digit_4", phrase: "a 4", weight: 0.02, drawings: ["145639"]),
        ShapeFamily(id: "digit_3", phrase: "a 3", weight: 0.02, drawings: ["1235987"]),
        ShapeFamily(id: "digit_6", phrase: "a 6", weight: 0.02, drawings: ["321478965"]),
        ShapeFamily(id: "square", phrase: "a square", weight: 0.08, drawings: ["12369874", "1254"]),
        ShapeFamily(id: "diamond", phrase: "a diamond", weight: 0.02, drawings: ["2486", "24865"]),
        ShapeFamily(id: "triangle", phrase: "a triangle", weight: 0.02, drawings: ["159874"]),
        ShapeFamily(
            id: "lines", phrase: "straight strokes", weight: 0.05,
            drawings: ["123654789", "123456789", "123456", "1234"]),
    ]
}
