// SPDX-License-Identifier: Apache-2.0
// patternlock's lock screen for Plasma's screen locker (kscreenlocker_greet):
// the user's picture, name and the time over the wallpaper (the greeter puts the
// wallpaper behind), the 3x3 grid to draw the pattern on, the module's messages
// whole, and the password field. Shared by Plasma 6 and 5.27: each version's
// LockScreen.qml gives `auth`, its greeter's authenticator in one form.
//
// What is answered to which prompt is Conversation.js's, the one conversation
// of every JavaScript screen: a drawn pattern answers only pam_patternlock's
// own prompt; a password typed in the field only another prompt (pam_unix's
// "Password:"), the module's being answered empty while it waits, so a
// pattern never reaches pam_unix or pam_faillock and a password never reaches
// the daemon, whatever its characters.
//
// For the tests, it says on stderr (console.log) where the grid and the button
// are and what it shows: never a dot of the pattern, nor a character typed.
import QtQuick 2.15
import QtQuick.Controls 2.15
import "Conversation.js" as Conv
import "PatternRule.js" as Rule

Item {
    id: screen

    /// The greeter's authenticator in one form: start(), respond(text),
    /// signals prompted(text, secret), said(text, error), succeeded(), failed();
    /// startAgain: start() may be called again while a conversation runs (Plasma
    /// 6, where it is then a no-op, and also during the grace time after an
    /// idle lock, when no conversation may start yet).
    property QtObject auth
    property string userName: ""
    property string userImage: ""
    property bool hidePath: false
    /// The greeter has shown the screen (its first frame is up: input reaches it).
    property bool shown: false
    onShownChanged: describe()
    /// The version's own Switch User button (plasma5/ or plasma6/ SwitchUser.qml),
    /// loaded apart: a module missing there leaves it out, not the lock screen.
    property url switchUserSource: ""
    /// What else unlocks beside the pattern (Plasma 6's fingerprint and
    /// smartcard readers), in Breeze's words; "" when nothing.
    property string otherWays: ""

    /// The layout the keys 1-9 light dots in ("phone", or "numpad" for 7 8 9
    /// on top): the keyboard's, a setting of this screen (the module's layout=
    /// says only how the answer is written).
    property string keypadLayout: "phone"

    /// The conversation (Conversation.js, shared with every JavaScript screen
    /// and checked against the Swift lock screen): what is answered to which
    /// prompt. Its state is a plain object; `sync()` copies what the view
    /// binds to after each call.
    property var conv: null
    onKeypadLayoutChanged: if (conv !== null) conv.keysLayout = keypadLayout === "numpad" ? "numpad" : "phone"
    /// "pattern" (the grid takes input), "password" (the field shows),
    /// "checking" (an answer is with PAM, or waits for its prompt).
    property string phase: "pattern"
    property string promptText: ""
    /// The field was opened from the grid while the pattern may still answer.
    property bool fieldFromGrid: false
    property var messages: []
    property bool flashing: false
    property bool started: false
    /// An answer waits for the prompt it answers.
    property bool answerWaiting: false
    /// A password entered waits for its prompt: the field is read-only.
    property bool passwordWaiting: false
    /// PAM said yes to an attempt nobody answered: the unlock waits for the
    /// person's next press or key.
    property bool held: false

    readonly property string usePasswordLabel: Conv.words.usePassword

    function debug(text) { console.log("patternlock-plasma: " + text); }

    function sync() {
        var view = Conv.shows(conv), was = phase;
        phase = view === "field" ? "password" : conv.phase === "checking" ? "checking" : "pattern";
        // The field takes the keys while it shows (a prompt may open it); the
        // screen's own handler (keys 1-9 on the grid) otherwise.
        if (phase === "password" && was !== "password") {
            grid.clear();
            field.forceActiveFocus();
        } else if (phase !== "password" && was === "password") {
            screen.forceActiveFocus();
        }
        promptText = conv.phase === "password" ? conv.promptText : "";
        fieldFromGrid = conv.fieldOpen && conv.phase !== "password" && conv.phase !== "checking";
        answerWaiting = conv.phase === "checking" && !conv.awaiting && (conv.pendingPattern !== null || conv.passwordPending);
        passwordWaiting = conv.passwordPending;
        held = conv.held;
    }

    /// Does what the conversation said, in order.
    function act(actions) {
        for (var i = 0; i < actions.length; i++) {
            var a = actions[i];
            if (a.answer !== undefined) {
                var text = a.answer === "pattern" ? a.text : a.answer === "field" ? field.text : "";
                if (a.answer === "field") field.text = "";
                auth.respond(text);
                debug("answered kind=" + (a.answer === "pattern" ? "pattern" : a.answer === "empty" ? "empty" : "field"));
            } else if (a.start) {
                begin();
            } else if (a.say !== undefined) {
                say(a.say);
            } else if (a.show !== undefined) {
                say(a.show);
            } else if (a.flash) {
                grid.wrong = true;
                flashing = true;
            } else if (a.restart) {
                restart.start();
            } else if (a.unlock) {
                debug("unlocked");
                Qt.quit();
                return;
            } else if (a.dot !== undefined) {
                grid.type(a.dot);
            } else if (a.openField !== undefined) {
                openField(a.openField);
            }
        }
        sync();
        describe();
    }

    function begin() {
        if (started && auth.startAgain !== true) return;
        if (!started) {
            Conv.started(conv);
            sync();
        }
        started = true;
        auth.start();
    }

    function say(text) {
        var m = messages.slice();
        m.push(text);
        while (m.length > 3) m.shift();
        messages = m;
    }

    /// The on-screen keyboard shown or hidden (with the field, which it types into).
    function toggleKeyboard() {
        if (phase !== "password") usePassword();
        var open = !(keyboard.item && keyboard.item.active);
        field.forceActiveFocus();
        if (keyboard.item) keyboard.item.activated = open;
        if (open) Qt.inputMethod.show(); else Qt.inputMethod.hide();
        describe();
    }

    /// The field opened from the grid with `initial` typed ("Use password", or
    /// a letter after digits typed on the grid).
    function openField(initial) {
        grid.clear();
        field.text = initial || "";
        field.forceActiveFocus();
    }

    function usePassword() { act(Conv.usePassword(conv)); }

    /// Back to the grid, only while the pattern may answer (not once pam_unix asks).
    function backToGrid() {
        Conv.usePattern(conv);
        sync();
        if (phase === "password") return;
        if (keyboard.item) keyboard.item.activated = false;
        Qt.inputMethod.hide();
        field.text = "";
        screen.forceActiveFocus();
        describe();
    }

    /// Where the open on-screen keyboard is: x,y,width,height in the window.
    function keyboardRect() {
        var k = keyboard.item, o = k.mapToItem(null, 0, 0);
        return Math.round(o.x) + "," + Math.round(o.y) + "," + Math.round(k.width) + "," + Math.round(k.height);
    }

    function describe() {
        var g = grid.mapToItem(null, (grid.width - grid.side) / 2, (grid.height - grid.side) / 2);
        var b = button.mapToItem(null, button.width / 2, button.height / 2);
        debug("phase=" + phase + " grid=" + Math.round(g.x) + "," + Math.round(g.y) + "," + Math.round(grid.side)
              + " button=" + Math.round(b.x) + "," + Math.round(b.y) + " shown=" + (shown ? 1 : 0)
              + " keyboard=" + (keyboardButton.visible ? Math.round(keyboardButton.mapToItem(null, keyboardButton.width / 2, 0).x)
                                + "," + Math.round(keyboardButton.mapToItem(null, 0, keyboardButton.height / 2).y) : "none")
              + (keyboard.item && keyboard.item.active ? " keyboard-open=" + keyboardRect() : "")
              + " switch-user=" + ["none", "ready", "loading", "error"][switchUser.status]
              + " words=" + Math.round(talk.mapToItem(null, 0, 0).y) + "," + Math.round(talk.height)
              + " messages=" + JSON.stringify(messages) + " other=" + JSON.stringify(otherWays));
    }

    Connections {
        target: screen.auth
        function onPrompted(text, secret) {
            var actions = Conv.prompted(screen.conv, text);
            var read = screen.conv.prompt;
            screen.debug("prompt kind=" + (read.pattern ? "pattern" : read.modulePassword ? "module-password" : "password"));
            screen.act(actions);
        }
        function onSaid(text, error) {
            screen.act(Conv.said(screen.conv, text));
        }
        function onSucceeded() {
            screen.debug("attempt result=success");
            screen.act(Conv.ended(screen.conv, true));
        }
        function onFailed() {
            screen.started = false;
            field.text = "";
            var actions = Conv.ended(screen.conv, false);
            screen.debug("attempt result=failure");
            screen.act(actions);
        }
    }

    // An answer waiting for its question, and none asked (Plasma 6's grace time
    // after an idle lock refuses to start a conversation): asked again each
    // second, where asking again is safe, until one starts.
    Timer {
        interval: 1000
        repeat: true
        running: screen.answerWaiting && screen.auth !== null && screen.auth.startAgain === true
        onTriggered: screen.auth.start()
    }

    // A wrong pattern stays red for a second; then the next attempt begins.
    Timer {
        id: restart
        interval: 1000
        onTriggered: {
            screen.flashing = false;
            grid.clear();
            screen.begin();
            screen.describe();
        }
    }

    Component.onCompleted: {
        conv = Conv.create(keypadLayout);
        begin();
        forceActiveFocus();
        describeSoon.start();
    }
    onWidthChanged: describeSoon.restart()
    onHeightChanged: describeSoon.restart()
    Timer { id: describeSoon; interval: 200; onTriggered: screen.describe() }

    focus: true
    Keys.onPressed: function (ev) {
        if (screen.held) {
            screen.act(Conv.keyed(screen.conv, " "));
            ev.accepted = true;
            return;
        }
        if (screen.phase !== "pattern") return;
        var key = ev.key;
        if (key >= Qt.Key_1 && key <= Qt.Key_9) {
            screen.act(Conv.keyed(screen.conv, String(key - Qt.Key_0)));
            ev.accepted = true;
        } else if (key === Qt.Key_Return || key === Qt.Key_Enter) {
            grid.finish();
            ev.accepted = true;
        } else if (key === Qt.Key_Escape || key === Qt.Key_Backspace) {
            grid.clear();
            Conv.cleared(screen.conv);
            ev.accepted = true;
        } else if (ev.text.length > 0 && ev.text.charCodeAt(0) >= 0x20) {
            // Any other key: the password, from its first character (and the
            // digits typed before it, which began it).
            screen.act(Conv.keyed(screen.conv, ev.text));
            ev.accepted = true;
        }
    }

    Rectangle {
        anchors.fill: parent
        color: "black"
        opacity: 0.35
    }

    // A success nobody answered for waits for a press anywhere (or a key).
    MouseArea {
        anchors.fill: parent
        z: 200
        enabled: screen.held
        visible: screen.held
        onPressed: screen.act(Conv.keyed(screen.conv, " "))
    }

    Column {
        id: head
        anchors.horizontalCenter: parent.horizontalCenter
        y: 16
        spacing: 6
        width: Math.min(screen.width - 32, 640)

        // The time and the date, as Breeze's clock gives them (the locale's short
        // time, its long date), each minute's change within a second.
        Text {
            id: clock
            property date now: new Date()
            anchors.horizontalCenter: parent.horizontalCenter
            color: "white"
            font.pixelSize: 40
            text: Qt.formatTime(now, Qt.locale().timeFormat(Locale.ShortFormat))
            Timer {
                interval: 1000
                running: true
                repeat: true
                onTriggered: clock.now = new Date()
            }
        }
        Text {
            anchors.horizontalCenter: parent.horizontalCenter
            color: "white"
            font.pixelSize: 18
            text: Qt.formatDate(clock.now, Qt.locale(), Locale.LongFormat)
        }
        // The user's picture, or (none, or unreadable) a person's outline in a
        // circle, as Breeze shows then.
        Item {
            anchors.horizontalCenter: parent.horizontalCenter
            width: 56
            height: 56
            Image {
                id: face
                anchors.fill: parent
                source: screen.userImage === "" ? "" : (screen.userImage.indexOf("://") < 0 ? "file://" + screen.userImage : screen.userImage)
                fillMode: Image.PreserveAspectCrop
                visible: status === Image.Ready
            }
            Canvas {
                anchors.fill: parent
                visible: face.status !== Image.Ready
                onPaint: {
                    var c = getContext("2d"), w = width;
                    c.reset();
                    c.fillStyle = Qt.rgba(0, 0, 0, 0.35);
                    c.strokeStyle = "white";
                    c.lineWidth = 2;
                    c.beginPath(); c.arc(w / 2, w / 2, w / 2 - 1, 0, 2 * Math.PI); c.fill(); c.stroke();
                    c.beginPath(); c.arc(w / 2, w * 0.38, w * 0.15, 0, 2 * Math.PI); c.stroke();
                    c.beginPath(); c.arc(w / 2, w * 0.92, w * 0.3, Math.PI * 1.15, Math.PI * 1.85); c.stroke();
                }
            }
        }
        Text {
            anchors.horizontalCenter: parent.horizontalCenter
            color: "white"
            font.pixelSize: 24
            text: screen.userName
        }
        // The messages, wrapped and whole: room for two lines is kept, so the
        // grid stays put for a short one, and a longer one moves the grid down
        // rather than being cut.
        Item {
            width: parent.width
            height: Math.max(50, talk.height)
            Column {
                id: talk
                width: parent.width
                spacing: 4
                Text {
                    id: messageText
                    width: parent.width
                    horizontalAlignment: Text.AlignHCenter
                    wrapMode: Text.Wrap
                    visible: text !== ""
                    color: screen.flashing ? "#ff8a80" : "white"
                    font.pixelSize: 18
                    text: screen.messages.join("\n")
                }
                Text {
                    width: parent.width
                    horizontalAlignment: Text.AlignHCenter
                    wrapMode: Text.Wrap
                    visible: screen.otherWays !== ""
                    color: "white"
                    font.pixelSize: 16
                    text: screen.otherWays
                }
            }
        }
    }

    // Below the words: the grid (or the field), as large as the room left above
    // its button and the row of Virtual Keyboard and Switch User allows.
    readonly property real bodyTop: head.y + head.height + 12
    // Where the grid's room ends: above its button and the bottom row.
    readonly property real bodyBottom: height - 16 - button.height - 16 - 56
    readonly property real bodyRoom: bodyBottom - bodyTop
    // A phone held upright (PatternRule.js, the lock screen's rule): the grid
    // across most of the width and low, where a thumb reaches, its button and the
    // row of Virtual Keyboard and Switch User under it, the words above it.
    readonly property bool phone: Rule.isPortraitPhone(width, height)

    PatternGrid {
        id: grid
        visible: screen.phase !== "password"
        width: screen.phone ? Math.max(120, Math.min(screen.width - 48, screen.bodyRoom, 480))
                            : Math.max(120, Math.min(screen.width * 0.7, screen.bodyRoom, 480))
        height: width
        x: (screen.width - width) / 2
        y: screen.phone ? Math.max(screen.bodyTop, screen.bodyBottom - width) : screen.bodyTop
        hidePath: screen.hidePath
        enabled: screen.phase === "pattern" && !screen.flashing
        onDrawn: function (dots) {
            screen.messages = [];
            screen.act(Conv.drawn(screen.conv, dots));
            if (screen.phase === "password") screen.openField("");
        }
        onTooShort: screen.act(Conv.tooShort(screen.conv))
        onStarted: { screen.messages = []; Conv.cleared(screen.conv); }
    }

    TextField {
        id: field
        visible: screen.phase === "password"
        anchors.horizontalCenter: parent.horizontalCenter
        y: screen.bodyTop + 8
        width: Math.min(screen.width - 64, 360)
        echoMode: TextInput.Password
        // Entered, the password waits for its prompt: it is sent as it was.
        readOnly: screen.passwordWaiting
        placeholderText: screen.promptText !== "" ? screen.promptText : "Password"
        // An empty Enter is nobody's password: not sent, so it costs no pam_faillock attempt.
        onAccepted: screen.act(Conv.entered(screen.conv, text === ""))
        Keys.onEscapePressed: if (text === "") screen.backToGrid()
    }

    Button {
        id: button
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.top: grid.bottom
        anchors.topMargin: 16
        // "Use password" on the grid; on the field "Use pattern" while the
        // module's prompt waits (not once pattern unlock is locked), so a
        // finger alone goes both ways.
        visible: screen.phase === "pattern" || screen.fieldFromGrid
        text: screen.phase === "pattern" ? screen.usePasswordLabel : Conv.words.usePattern
        onClicked: screen.phase === "pattern" ? screen.usePassword() : screen.backToGrid()
    }

    // The on-screen keyboard, for the password field, as Breeze loads it:
    // Qt's virtual keyboard on X11, KWin's input method on Wayland. Loaded
    // apart: where neither is installed the button is not shown.
    Loader {
        id: keyboard
        z: 100
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: parent.bottom
        source: Qt.platform.pluginName.indexOf("wayland") >= 0 ? "KeyboardWayland.qml" : "KeyboardX11.qml"
        onStatusChanged: screen.describe()
    }
    Connections {
        target: keyboard.item
        ignoreUnknownSignals: true
        function onActiveChanged() { screen.describe(); }
    }

    Button {
        id: keyboardButton
        anchors.left: parent.left
        anchors.bottom: parent.bottom
        anchors.margins: 16
        visible: keyboard.status === Loader.Ready && !(keyboard.item && keyboard.item.active)
        text: "Virtual Keyboard"
        onClicked: screen.toggleKeyboard()
    }

    Loader {
        id: switchUser
        anchors.right: parent.right
        anchors.bottom: parent.bottom
        anchors.margins: 16
        source: screen.switchUserSource
        onStatusChanged: screen.describe()
    }
}
