// SPDX-License-Identifier: Apache-2.0
// The 3x3 grid of patternlock's Plasma lock screen: dots that light as the
// finger or pointer passes, a line that follows it, red for a wrong pattern.
// The drawing rule is PatternRule.js (checked against the core in make check).
// Qt 5.15 and Qt 6 alike (Plasma 5.27 and 6).
import QtQuick 2.15
import "PatternRule.js" as Rule

Item {
    id: grid

    /// The dots drawn so far (1-9), in order.
    property var path: []
    /// Where the finger is, in the grid's coordinates (null: lifted).
    property var finger: null
    /// A wrong pattern: the path shows red until cleared.
    property bool wrong: false
    /// The path is not drawn while it is made (the lock screen's --hide-path).
    property bool hidePath: false
    property color dotColour: "#c8ccd4"
    property color litColour: "#4fc3f7"
    property color wrongColour: "#e53935"
    readonly property real side: Math.min(width, height)
    readonly property real spacing: side / 3
    readonly property real dotRadius: Math.max(4, spacing * 0.08)
    property point last: Qt.point(0, 0)

    onPathChanged: canvas.requestPaint()
    onWrongChanged: canvas.requestPaint()
    onHidePathChanged: canvas.requestPaint()

    /// A path of at least the fewest dots ended (finger lifted, or Enter after typed dots).
    signal drawn(var dots)
    /// Fewer than the fewest dots ended: not counted.
    signal tooShort()
    /// A drag began (the lock screen clears its message, as a new attempt).
    signal started()

    function clear() {
        path = [];
        finger = null;
        wrong = false;
        canvas.requestPaint();
    }

    /// A dot typed on the keys 1-9 (already in the grid's dot numbering).
    function type(dot) {
        if (hand.pressed) return;
        if (wrong) clear();
        var p = path.slice();
        if (Rule.type(p, dot)) {
            path = p;
            canvas.requestPaint();
        }
    }

    /// Ends typed dots, as a lift ends drawn ones.
    function finish() {
        if (hand.pressed || path.length === 0 || wrong) return;
        end();
    }

    function end() {
        finger = null;
        var dots = path.slice();
        canvas.requestPaint();
        if (dots.length === 0) return;
        if (dots.length >= Rule.minimumDots) {
            drawn(dots);
        } else {
            clear();
            tooShort();
        }
    }

    function local(x, y) { return { x: x - (width - side) / 2, y: y - (height - side) / 2 }; }

    /// The finger or pointer at (x, y) of the grid item: the dots its straight
    /// move from the last place enters join the path.
    function moved(x, y) {
        var p = local(x, y);
        var grown = path.slice();
        if (Rule.move(grown, { x: last.x, y: last.y }, p, side)) path = grown;
        last = Qt.point(p.x, p.y);
        finger = p;
        canvas.requestPaint();
    }

    Canvas {
        id: canvas
        anchors.fill: parent
        onAvailableChanged: requestPaint()
        onWidthChanged: requestPaint()
        onHeightChanged: requestPaint()
        onPaint: {
            var ctx = getContext("2d");
            ctx.reset();
            var ox = (grid.width - grid.side) / 2, oy = (grid.height - grid.side) / 2;
            var colour = grid.wrong ? grid.wrongColour : grid.litColour;
            var showPath = grid.wrong || !grid.hidePath;
            if (showPath && grid.path.length > 0) {
                ctx.strokeStyle = colour;
                ctx.globalAlpha = 0.8;
                ctx.lineWidth = Math.max(3, grid.spacing * 0.05);
                ctx.lineCap = "round";
                ctx.lineJoin = "round";
                ctx.beginPath();
                var c = Rule.centre(grid.path[0], grid.side);
                ctx.moveTo(ox + c.x, oy + c.y);
                for (var i = 1; i < grid.path.length; i++) {
                    c = Rule.centre(grid.path[i], grid.side);
                    ctx.lineTo(ox + c.x, oy + c.y);
                }
                if (grid.finger && !grid.wrong) ctx.lineTo(ox + grid.finger.x, oy + grid.finger.y);
                ctx.stroke();
                ctx.globalAlpha = 1;
            }
            for (var dot = 1; dot <= 9; dot++) {
                var d = Rule.centre(dot, grid.side);
                var lit = showPath && grid.path.indexOf(dot) >= 0;
                if (lit) {
                    ctx.fillStyle = colour;
                    ctx.globalAlpha = 0.3;
                    ctx.beginPath();
                    ctx.arc(ox + d.x, oy + d.y, grid.dotRadius * 1.7, 0, 2 * Math.PI);
                    ctx.fill();
                    ctx.globalAlpha = 1;
                }
                ctx.fillStyle = lit ? colour : grid.dotColour;
                ctx.beginPath();
                ctx.arc(ox + d.x, oy + d.y, grid.dotRadius * (lit ? 1.1 : 1), 0, 2 * Math.PI);
                ctx.fill();
            }
        }
    }

    // A finger on a touch screen comes as the same presses and moves (Qt
    // synthesises them for a MouseArea), so touch and pointer draw alike.
    MouseArea {
        id: hand
        anchors.fill: parent
        preventStealing: true
        onPressed: function (ev) {
            grid.clear();
            grid.started();
            var p = grid.local(ev.x, ev.y);
            var path = [];
            Rule.move(path, p, p, grid.side);
            grid.path = path;
            grid.last = Qt.point(p.x, p.y);
            grid.finger = p;
            canvas.requestPaint();
        }
        onPositionChanged: function (ev) { grid.moved(ev.x, ev.y); }
        // Moves may come merged: the lift's own place ends the last stretch.
        onReleased: function (ev) {
            grid.moved(ev.x, ev.y);
            grid.end();
        }
        onCanceled: grid.clear()
    }
}
