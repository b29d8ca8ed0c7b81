// SPDX-License-Identifier: Apache-2.0
// patternlock's lock screen for Plasma's screen locker (kscreenlocker_greet):
// the user's picture, name and the time over the wallpaper (the greeter puts the
// wallpaper behind), the 3x3 grid to draw the pattern on, the module's messages
// whole, and the password field. Shared by Plasma 6 and 5.27: each version's
// LockScreen.qml gives `auth`, its greeter's authenticator in one form.
//
// A drawn pattern answers only pam_patternlock's own prompt (ModulePrompt.js,
// the module's sentences); any other prompt (pam_unix's "Password:") gets the
// password field, so a pattern never reaches pam_unix or pam_faillock.
//
// For the tests, it says on stderr (console.log) where the grid and the button
// are and what it shows: never a dot of the pattern, nor a character typed.
import QtQuick 2.15
import QtQuick.Controls 2.15
import "ModulePrompt.js" as Module

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

    /// "pattern" (the grid), "password" (the field), "checking" (an answer sent).
    property string phase: "pattern"
    property string promptText: ""
    property var promptRead: ({ pattern: false })
    property bool awaiting: false
    property var pendingPattern: null
    property var pendingPassword: null
    property bool lastWasPattern: false
    property var messages: []
    property bool flashing: false
    property bool started: false
    /// The keys 1-9 typed on the grid since it was last cleared, as typed: the
    /// start of a password if a letter follows.
    property string typedKeys: ""

    readonly property string usePasswordLabel: "Use password"

    function debug(text) { console.log("patternlock-plasma: " + text); }

    function begin() {
        if (started && auth.startAgain !== true) return;
        started = true;
        awaiting = false;
        promptText = "";
        promptRead = { pattern: false };
        auth.start();
    }

    function respond(text, isPattern) {
        awaiting = false;
        lastWasPattern = isPattern;
        phase = "checking";
        auth.respond(text);
        debug("answered kind=" + (isPattern ? "pattern" : "field"));
    }

    function say(text) {
        var m = messages.slice();
        m.push(text);
        while (m.length > 3) m.shift();
        messages = m;
    }

    /// The on-screen keyboard shown or hidden (with the field, which it types into).
    function toggleKeyboard() {
        if (phase !== "password") showField("");
        var open = !(keyboard.item && keyboard.item.active);
        field.forceActiveFocus();
        if (keyboard.item) keyboard.item.activated = open;
        if (open) Qt.inputMethod.show(); else Qt.inputMethod.hide();
        describe();
    }

    function showField(initial) {
        grid.clear();
        typedKeys = "";
        pendingPattern = null;
        phase = "password";
        field.text = initial || "";
        field.forceActiveFocus();
        describe();
    }

    function backToGrid() {
        if (keyboard.item) keyboard.item.activated = false;
        Qt.inputMethod.hide();
        field.text = "";
        phase = "pattern";
        screen.forceActiveFocus();
        describe();
    }

    /// The field's text, from Enter or the button (an empty Enter is nobody's
    /// password: it is not sent, so it costs no pam_faillock attempt).
    function submitField() {
        var text = field.text;
        if (text === "") return;
        field.text = "";
        if (!awaiting) {
            pendingPassword = text;
            phase = "checking";
            begin();
            return;
        }
        if (promptRead.pattern && !promptRead.orPassword) {
            // "Pattern (Enter to skip)": skipped, and the password answers the next prompt.
            pendingPassword = text;
            respond("", false);
            return;
        }
        respond(text, false);
    }

    function drawn(dots) {
        messages = [];
        typedKeys = "";
        if (awaiting && promptRead.pattern) {
            respond(Module.answer(dots, promptRead.layout || "phone"), true);
            return;
        }
        if (awaiting) {
            // Another module's question (pam_unix's, once pattern unlock is
            // locked): a pattern never answers it.
            say("Type your password: the pattern is not asked for now.");
            showField("");
            return;
        }
        pendingPattern = dots;
        phase = "checking";
        begin();
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
            screen.awaiting = true;
            screen.promptText = text;
            screen.promptRead = Module.read(text);
            screen.debug("prompt kind=" + (screen.promptRead.pattern ? "pattern" : "password"));
            if (screen.promptRead.pattern) {
                if (screen.pendingPassword !== null) {
                    var typed = screen.pendingPassword;
                    if (screen.promptRead.orPassword) {
                        screen.pendingPassword = null;
                        screen.respond(typed, false);
                    } else {
                        screen.respond("", false);
                    }
                } else if (screen.pendingPattern !== null) {
                    var dots = screen.pendingPattern;
                    screen.pendingPattern = null;
                    screen.respond(Module.answer(dots, screen.promptRead.layout || "phone"), true);
                } else if (screen.phase === "checking") {
                    screen.phase = "pattern";
                }
            } else {
                // Never a pattern here: only the field answers it.
                screen.pendingPattern = null;
                if (screen.pendingPassword !== null) {
                    var password = screen.pendingPassword;
                    screen.pendingPassword = null;
                    screen.respond(password, false);
                } else {
                    screen.showField("");
                }
            }
            screen.describe();
        }
        function onSaid(text, error) {
            if (Module.gridMessage(text) !== null) return;  // the grid is drawn here
            screen.say(text);
            screen.describe();
        }
        function onSucceeded() {
            screen.debug("unlocked");
            Qt.quit();
        }
        function onFailed() {
            screen.awaiting = false;
            screen.started = false;
            screen.pendingPassword = null;
            screen.pendingPattern = null;
            if (screen.lastWasPattern) {
                grid.wrong = true;
                screen.flashing = true;
                screen.phase = "pattern";
            } else {
                screen.say("Unlocking failed.");
            }
            screen.debug("attempt result=failure");
            screen.describe();
            restart.start();
        }
    }

    // An answer waiting for its question, and none asked (Plasma 6's grace time
    // after an idle lock refuses to start a conversation): asked again each
    // second, where asking again is safe, until one starts.
    Timer {
        interval: 1000
        repeat: true
        running: screen.phase === "checking" && !screen.awaiting && screen.auth !== null
                 && screen.auth.startAgain === true && (screen.pendingPattern !== null || screen.pendingPassword !== null)
        onTriggered: screen.auth.start()
    }

    // A wrong pattern stays red for a second; then the next attempt begins.
    Timer {
        id: restart
        interval: 1000
        onTriggered: {
            screen.flashing = false;
            grid.clear();
            if (screen.phase === "checking") screen.phase = "pattern";
            screen.begin();
            screen.describe();
        }
    }

    Component.onCompleted: {
        begin();
        forceActiveFocus();
        describeSoon.start();
    }
    onWidthChanged: describeSoon.restart()
    onHeightChanged: describeSoon.restart()
    Timer { id: describeSoon; interval: 200; onTriggered: screen.describe() }

    focus: true
    Keys.onPressed: function (ev) {
        if (screen.phase !== "pattern") return;
        var key = ev.key;
        if (key >= Qt.Key_1 && key <= Qt.Key_9) {
            screen.typedKeys += ev.text;
            grid.type(Module.keyForDot(key - Qt.Key_0, screen.promptRead.layout || "phone"));
            ev.accepted = true;
        } else if (key === Qt.Key_Return || key === Qt.Key_Enter) {
            grid.finish();
            ev.accepted = true;
        } else if (key === Qt.Key_Escape || key === Qt.Key_Backspace) {
            grid.clear();
            screen.typedKeys = "";
            ev.accepted = true;
        } else if (ev.text.length > 0 && ev.text.charCodeAt(0) >= 0x20) {
            // Any other key: the password, from its first character (and the
            // digits typed before it, which began it).
            screen.showField(screen.typedKeys + ev.text);
            ev.accepted = true;
        }
    }

    Rectangle {
        anchors.fill: parent
        color: "black"
        opacity: 0.35
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
    readonly property real bodyRoom: height - bodyTop - 16 - button.height - 16 - 56

    PatternGrid {
        id: grid
        visible: screen.phase !== "password"
        width: Math.max(120, Math.min(screen.width * 0.7, screen.bodyRoom, 480))
        height: width
        x: (screen.width - width) / 2
        y: screen.bodyTop
        hidePath: screen.hidePath
        enabled: screen.phase === "pattern" && !screen.flashing
        onDrawn: function (dots) { screen.drawn(dots); }
        onTooShort: {
            screen.say("Connect at least 4 dots. This was not counted; try again.");
            screen.describe();
        }
        onStarted: { screen.messages = []; screen.typedKeys = ""; }
    }

    TextField {
        id: field
        visible: screen.phase === "password"
        anchors.horizontalCenter: parent.horizontalCenter
        y: screen.bodyTop + 8
        width: Math.min(screen.width - 64, 360)
        echoMode: TextInput.Password
        placeholderText: screen.promptText !== "" && !screen.promptRead.pattern ? screen.promptText : "Password"
        onAccepted: screen.submitField()
        // Back to the grid only while the pattern may answer (not once pam_unix asks).
        Keys.onEscapePressed: if (text === "" && (!screen.awaiting || screen.promptRead.pattern === true)) screen.backToGrid()
    }

    Button {
        id: button
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.top: grid.bottom
        anchors.topMargin: 16
        // "Use password" on the grid; on the field "Use pattern" while the
        // module's prompt waits (not once pattern unlock is locked), so a
        // finger alone goes both ways.
        visible: screen.phase === "pattern"
                 || (screen.phase === "password" && screen.awaiting && screen.promptRead.pattern === true)
        text: screen.phase === "pattern" ? screen.usePasswordLabel : "Use pattern"
        onClicked: screen.phase === "pattern" ? screen.showField("") : screen.backToGrid()
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
