// SPDX-License-Identifier: Apache-2.0
// patternlock's lock screen for Plasma 6's kscreenlocker_greet (a Plasma/Shell
// package named by PLASMA_DEFAULT_SHELL in the environment of what starts the
// greeter): the greeter's PamAuthenticators given to PatternScreen.qml in its
// one form. 6.x: startAuthenticating() starts a conversation; the notify
// signals promptChanged, promptForSecretChanged, infoMessageChanged and
// errorMessageChanged carry no text (the properties do); failed(kind, …) with
// kind 0 is the password's conversation (fingerprint and smartcard readers,
// which run beside it, fail on their own and are left alone; while they are
// waiting, the screen says so in Breeze's words, and shows their errors; any
// of them that succeeds unlocks through succeeded() as the password does).
import QtQuick 2.15

Item {
    id: root

    // Set by the greeter.
    property bool viewVisible: false
    property bool locked: false
    property bool suspendToRamSupported: false
    property bool suspendToDiskSupported: false
    signal suspendToRam()
    signal suspendToDisk()

    QtObject {
        id: adapter
        signal prompted(string text, bool secret)
        signal said(string text, bool error)
        signal succeeded()
        signal failed()
        readonly property bool startAgain: true
        function start() { authenticator.startAuthenticating(); }
        function respond(text) { authenticator.respond(text); }
    }

    Connections {
        target: authenticator
        function onPromptChanged() { adapter.prompted(authenticator.prompt, false); }
        function onPromptForSecretChanged() { adapter.prompted(authenticator.promptForSecret, true); }
        function onInfoMessageChanged() { if (authenticator.infoMessage !== "") adapter.said(authenticator.infoMessage, false); }
        function onErrorMessageChanged() { if (authenticator.errorMessage !== "") adapter.said(authenticator.errorMessage, true); }
        function onSucceeded() { adapter.succeeded(); }
        function onFailed(kind, which) { if (kind === 0) adapter.failed(); }
        function onNoninteractiveError(kind, which) { if (which && which.errorMessage !== "") adapter.said(which.errorMessage, true); }
    }

    // Authenticator.Fingerprint (1) and Authenticator.Smartcard (2) of
    // org.kde.kscreenlocker, read as numbers: that module is not imported, so
    // nothing here can keep the screen from loading.
    readonly property int readers: authenticator.authenticatorTypes || 0
    readonly property string otherWays: [
        (readers & 1) ? "(or scan your fingerprint on the reader)" : "",
        (readers & 2) ? "(or scan your smartcard)" : ""
    ].filter(function (line) { return line !== ""; }).join("\n")

    PatternScreen {
        anchors.fill: parent
        shown: root.viewVisible
        auth: adapter
        userName: kscreenlocker_userName
        userImage: kscreenlocker_userImage
        hidePath: typeof config !== "undefined" && config.hidePath === true
        keypadLayout: typeof config !== "undefined" && config.keypadLayout === "numpad" ? "numpad" : "phone"
        otherWays: root.otherWays
        switchUserSource: Qt.resolvedUrl("SwitchUser.qml")
    }
}
