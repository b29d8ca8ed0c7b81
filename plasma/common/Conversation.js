.pragma library
// SPDX-License-Identifier: Apache-2.0
// How patternlock's Plasma lock screen tells pam_patternlock's pattern prompt
// from every other prompt, and the module's grid picture from the messages a
// user must read: the same reading as the Swift lock screen's
// (Sources/PatternLockWire/ModulePrompt.swift, on the sentences the module
// prints, Tests/Contract/sentences.txt). Tests/PatternLockScreenTests/
// PlasmaRuleTests.swift checks every form against it. A drawn pattern answers
// only a prompt read here as the module's; any other gets the password field.

var patternPrompt = "Pattern (Enter to skip): ";
var patternOrPasswordPrompt = "Pattern or password: ";
var numpadPatternPrompt = "Pattern on the numeric keypad (Enter to skip): ";
var numpadPatternOrPasswordPrompt = "Pattern on the numeric keypad or password: ";
var keys = { phone: "123 456 789", numpad: "789 456 123" };
var rows = { phone: "  1 2 3\n  4 5 6\n  7 8 9", numpad: "  7 8 9\n  4 5 6\n  1 2 3" };
var gridOpening = "Pattern unlock for ";
var gridClosing = ": type the dots in order.";
var layouts = ["phone", "numpad"];

function endsWith(s, tail) { return s.length >= tail.length && s.substring(s.length - tail.length) === tail; }
function startsWith(s, head) { return s.substring(0, head.length) === head; }

// The layout a grid picture in `text` shows ("phone", "numpad"), or null.
function layoutOfGrid(text) {
    var lines = text.split("\n");
    for (var i = 0; i < lines.length; i++) {
        if (startsWith(lines[i], gridOpening) && endsWith(lines[i], gridClosing)) {
            if (i + 3 >= lines.length) return null;
            var shown = lines.slice(i + 1, i + 4).join("\n");
            for (var j = 0; j < layouts.length; j++) {
                if (rows[layouts[j]] === shown) return layouts[j];
            }
            return null;
        }
    }
    return null;
}

// A PAM prompt read: { pattern: true, layout: "phone" | "numpad" | null,
// orPassword: bool } for the module's, { pattern: false } for any other.
function read(text) {
    var lines = text.split("\n");
    var last = lines[lines.length - 1];
    if (last === patternPrompt) return { pattern: true, layout: layoutOfGrid(text), orPassword: false };
    if (last === patternOrPasswordPrompt) return { pattern: true, layout: layoutOfGrid(text), orPassword: true };
    if (last === numpadPatternPrompt || last === numpadPatternOrPasswordPrompt)
        return { pattern: true, layout: "numpad", orPassword: last === numpadPatternOrPasswordPrompt };
    for (var i = 0; i < layouts.length; i++) {
        var k = keys[layouts[i]];
        if (last === "Pattern [" + k + "]: ") return { pattern: true, layout: layouts[i], orPassword: false };
        if (last === "Pattern [" + k + "] or password: ") return { pattern: true, layout: layouts[i], orPassword: true };
    }
    return { pattern: false };
}

// Whether a message is the module's grid picture (a screen that draws the grid
// need not show it): its layout, or null.
function gridMessage(text) {
    return text.split("\n").length === 4 ? layoutOfGrid(text) : null;
}

// The key a dot (1-9) sits on in `layout` (its own inverse).
function keyForDot(dot, layout) {
    if (layout !== "numpad") return dot;
    return dot <= 3 ? dot + 6 : dot >= 7 ? dot - 6 : dot;
}

// The answer to the module's prompt: the dots as the keys they sit on in the
// module's layout (the phone's when the prompt names none).
function answer(dots, layout) {
    var out = "";
    for (var i = 0; i < dots.length; i++) out += String(keyForDot(dots[i], layout));
    return out;
}
