// SPDX-License-Identifier: Apache-2.0
// The on-screen keyboard on Wayland: KWin's input method (its virtual
// keyboard), turned on when asked for. Loaded apart by PatternScreen.qml.
import QtQuick 2.15
import org.kde.plasma.workspace.keyboardlayout 1.0 as Keyboards

Item {
    property bool activated: false
    readonly property bool active: Keyboards.KWinVirtualKeyboard.visible
    onActivatedChanged: if (activated) Keyboards.KWinVirtualKeyboard.enabled = true
}
