.pragma library
// SPDX-License-Identifier: Apache-2.0
// The conversation of every screen patternlock draws on in JavaScript (Plasma's
// lock screen in QML; GNOME Shell's unlock and polkit dialogs, gnome/): how it tells pam_patternlock's
// pattern prompt from every other prompt and the module's grid picture from the
// messages a user must read, what it answers to which prompt, and its words.
// One file, so that no screen can answer differently: the Swift lock screen
// (Sources/PatternLockScreen/LockScreen.swift) is the reference, and
// Tests/PatternLockScreenTests/ConversationTests.swift runs this file under
// node through the same table of scenarios (Tests/Contract/conversation.txt),
// its words against Tests/Contract/screens.txt, and its prompt reading against
// every form the C module makes (Tests/CPamPatternLockTests/PlasmaPromptTests).
//
// The rule: a drawn pattern answers only a prompt read here as the module's; a
// password typed in the field answers only a prompt that is not the module's,
// and the module's prompt is answered empty while it waits (so that a password
// made only of the digits 1-9 goes to pam_unix, never to the daemon as a
// pattern); an empty Enter answers nothing.
//
// Plain ECMAScript 5 with no QML types: QML loads it as a library, node as a
// script, GNOME Shell as the ES module scripts/js-module makes of it.

var patternPrompt = "Pattern (Enter to skip): ";
var patternOrPasswordPrompt = "Pattern or password: ";
var numpadPatternPrompt = "Pattern on the numeric keypad (Enter to skip): ";
var numpadPatternOrPasswordPrompt = "Pattern on the numeric keypad or password: ";
// The module's prompt while the pattern cannot be used (one_prompt: locked, or
// no answer from the daemon): answered empty, the field answers pam_unix's.
var modulePasswordPrompt = "Password (not the pattern): ";
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
// orPassword: bool } for the module's pattern prompt, { pattern: false,
// modulePassword: true } for its prompt while the pattern cannot be used,
// { pattern: false } for any other.
function readPrompt(text) {
    if (text === modulePasswordPrompt) return { pattern: false, modulePassword: true };
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
function answerKeys(dots, layout) {
    var out = "";
    for (var i = 0; i < dots.length; i++) out += String(keyForDot(dots[i], layout));
    return out;
}

// The words a screen says of its own (Tests/Contract/screens.txt).
var words = {
    tooShort: "Connect at least 4 dots. This was not counted; try again.",
    failed: "Not unlocked. Try again.",
    notAsked: "Type your password: the pattern is not asked for now.",
    held: "Tap or press a key to unlock.",
    usePassword: "Use password",
    usePattern: "Use pattern"
};

// A new conversation. `keysLayout`: the layout the screen's keys 1-9 are read
// in ("phone" when not given, or "numpad"): the screen's own setting, about the
// keyboard only, as the Swift lock screen's --layout (the module's layout= says
// how the answer is written, never which key lights which dot).
function create(keysLayout) {
    return {
        // "waiting" (no prompt yet), "pattern" (the module's prompt waits),
        // "password" (another prompt waits: the field shows), "checking" (an
        // answer is with PAM, or waits for the prompt it answers).
        phase: "waiting",
        awaiting: false,
        prompt: { pattern: false },
        promptText: "",
        // The field shows while the grid would (opened by "Use password" or a letter).
        fieldOpen: false,
        pendingPattern: null,
        passwordPending: false,
        answeredPattern: false,
        // This attempt asked the person something (not only the module's
        // prompt for the password, which is answered empty at once).
        asked: false,
        // The person answered a prompt of this attempt (the module's prompt for
        // the password, answered empty by the screen, is not theirs).
        answered: false,
        // PAM said yes to an attempt nobody answered (an empty password under
        // nullok): the unlock waits for the person's next input.
        held: false,
        keysLayout: keysLayout === "numpad" ? "numpad" : "phone",
        gridLayout: null,
        // The keys 1-9 typed on the grid since it was cleared: a password's
        // first characters if a letter follows.
        typedKeys: ""
    };
}

// The layout the module reads its answer in: the prompt's, else this
// attempt's grid picture, else the phone's.
function moduleLayout(c) { return c.prompt.layout || c.gridLayout || "phone"; }

// What shows: "field" (the password field) or "grid".
function shows(c) { return c.phase === "password" || c.fieldOpen ? "field" : "grid"; }

// A new attempt: nothing is asked yet.
function started(c) {
    c.awaiting = false;
    c.prompt = { pattern: false };
    c.promptText = "";
    c.gridLayout = null;
    c.answeredPattern = false;
    c.asked = false;
    c.answered = false;
    c.held = false;
    if (c.phase !== "checking" || (c.pendingPattern === null && !c.passwordPending)) c.phase = "waiting";
    return [];
}

// `byScreen`: the screen answers on its own (the module's prompt for the
// password), not the person.
function answer(c, kind, text, byScreen) {
    c.awaiting = false;
    c.phase = "checking";
    c.answeredPattern = kind === "pattern";
    if (!byScreen) c.answered = true;
    return { answer: kind, text: text || "" };
}

// The person's input while a success waits for it: the unlock.
function release(c) {
    c.held = false;
    return [{ unlock: true }];
}

// A PAM prompt. Actions: { answer: "pattern", text: KEYS }, { answer: "empty" },
// { answer: "field" } (the field's text; the screen clears the field after).
function prompted(c, text) {
    var read = readPrompt(text);
    c.prompt = read;
    c.promptText = text;
    c.awaiting = true;
    if (read.modulePassword) {
        // Nobody is asked: the field's password waits for pam_unix's prompt
        // (a password of digits only would end the attempt here), and what
        // the person types meanwhile goes on as before any prompt.
        c.pendingPattern = null;
        var empty = answer(c, "empty", "", true);
        if (!c.passwordPending) c.phase = "waiting";
        return [empty];
    }
    c.asked = true;
    if (read.pattern) {
        if (c.passwordPending) return [answer(c, "empty")];
        if (c.pendingPattern !== null) {
            var dots = c.pendingPattern;
            c.pendingPattern = null;
            return [answer(c, "pattern", answerKeys(dots, moduleLayout(c)))];
        }
        c.phase = "pattern";
        return [];
    }
    // Never a pattern here: only the field answers it.
    c.pendingPattern = null;
    if (c.passwordPending) {
        c.passwordPending = false;
        c.fieldOpen = false;
        return [answer(c, "field")];
    }
    c.phase = "password";
    c.fieldOpen = false;
    if (c.answeredPattern) {
        // The module refused the pattern and PAM went on to the next module.
        c.answeredPattern = false;
        return [{ flash: true }];
    }
    return [];
}

// A PAM message. Actions: { show: TEXT } unless it is the module's grid
// picture (the screen draws the grid instead).
function said(c, text) {
    var grid = gridMessage(text);
    if (grid !== null) {
        c.gridLayout = grid;
        return [];
    }
    return [{ show: text }];
}

// A pattern drawn (or typed and ended with Enter), at least the fewest dots.
function drawn(c, dots) {
    if (c.held) return release(c);
    c.typedKeys = "";
    if (c.phase === "pattern") return [answer(c, "pattern", answerKeys(dots, moduleLayout(c)))];
    if (c.phase === "password") {
        // Another module's question (pam_unix's, once pattern unlock is
        // locked): a pattern never answers it.
        return [{ say: words.notAsked }];
    }
    c.pendingPattern = dots;
    c.phase = "checking";
    return [{ start: true }];
}

// A path of fewer dots: nothing is answered.
function tooShort(c) {
    c.typedKeys = "";
    return [{ say: words.tooShort }];
}

// "Use password" on the grid: the field opens, nothing is answered.
function usePassword(c) {
    if (c.held) return release(c);
    if (c.phase !== "waiting" && c.phase !== "pattern") return [];
    c.typedKeys = "";
    c.fieldOpen = true;
    return [{ openField: "" }];
}

// Back to the grid from the field ("Use pattern", Escape on an empty field),
// only while the pattern may still answer, and not while a password entered
// waits for its prompt.
function usePattern(c) {
    if (c.phase === "password" || c.phase === "checking") return [];
    c.fieldOpen = false;
    return [];
}

// Enter in the field, with `empty` whether it holds nothing.
function entered(c, empty) {
    if (c.held) return release(c);
    if (empty) return [];  // nobody's password: it costs no pam_faillock attempt
    if (c.phase === "password") {
        c.fieldOpen = false;
        return [answer(c, "field")];
    }
    if (c.phase === "checking") return [];
    c.passwordPending = true;
    // The module's prompt, skipped: the password waits for the next prompt.
    if (c.phase === "pattern") return [answer(c, "empty")];
    c.phase = "checking";
    return [{ start: true }];
}

// A key typed on the grid (its text). Actions: { dot: N } for the keys 1-9
// (in the keys' layout), { openField: TEXT } for any other printable key: the
// password, from the digits typed before it.
function keyed(c, text) {
    if (c.held) return release(c);
    var code = text.length === 1 ? text.charCodeAt(0) - 48 : -1;
    if (code >= 1 && code <= 9) {
        c.typedKeys += text;
        return [{ dot: keyForDot(code, c.keysLayout) }];
    }
    var initial = c.typedKeys + text;
    c.typedKeys = "";
    c.fieldOpen = true;
    return [{ openField: initial }];
}

// The grid was cleared (Escape, Backspace, a new path): the keys typed go.
function cleared(c) { c.typedKeys = ""; }

// The attempt's end. Actions: { unlock: true }, or, when nobody answered
// anything (PAM said yes with no one there), { say: words.held } and the unlock
// at the person's next input (`held`); or, on failure, { flash: true }
// after a pattern, { say: words.failed } after anything else, then
// { restart: true } (the next attempt now) or, when nobody was asked anything,
// { end: true } (the next attempt at the person's next input, not in a loop).
function ended(c, success) {
    if (success) {
        c.phase = "checking";
        // Held only when nobody was asked anything either: a yes while the
        // module's prompt waits comes from an authenticator beside the
        // conversation (Plasma 6's fingerprint and smartcard readers), which
        // the person used.
        if (!c.answered && !c.asked) {
            c.held = true;
            c.fieldOpen = false;
            return [{ say: words.held }];
        }
        return [{ unlock: true }];
    }
    var out = c.answeredPattern ? [{ flash: true }] : [{ say: words.failed }];
    c.phase = "waiting";
    c.awaiting = false;
    c.fieldOpen = false;
    c.passwordPending = false;
    c.pendingPattern = null;
    c.answeredPattern = false;
    c.typedKeys = "";
    out.push(c.asked ? { restart: true } : { end: true });
    return out;
}
