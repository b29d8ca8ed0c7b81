.pragma library
// SPDX-License-Identifier: Apache-2.0
// The drawing rule of patternlock's JavaScript screens (Plasma's lock screen,
// GNOME Shell's dialogs): the same as the lock screen's and the setup window's (Sources/PatternLockScreen/GestureTracker.swift
// on the core's Pattern.dotPassedOver). QML cannot call the Swift core, so
// Tests/PatternLockScreenTests/PlasmaRuleTests.swift checks this file against
// it: the table below equals the core's, and for every one of the 389,112
// patterns a path through the dots' centres gives here what it gives there.

// passedOver[a][b]: the dot a straight move from dot a to dot b passes over (0: none).
var passedOver = [
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 2, 0, 0, 0, 4, 0, 5],
    [0, 0, 0, 0, 0, 0, 0, 0, 5, 0],
    [0, 2, 0, 0, 0, 0, 0, 5, 0, 6],
    [0, 0, 0, 0, 0, 0, 5, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 5, 0, 0, 0, 0, 0],
    [0, 4, 0, 5, 0, 0, 0, 0, 0, 8],
    [0, 0, 5, 0, 0, 0, 0, 0, 0, 0],
    [0, 5, 0, 6, 0, 0, 0, 8, 0, 0]
];

// A dot's hit circle as a share of the spacing between dot centres (GridGeometry.hitShare):
// below the 0.447 spacings a knight move passes from the dots beside it.
var hitShare = 0.3;

// A phone held upright, in logical pixels: narrow, and at least half again as
// tall as wide. There the grid goes across most of the width and low, where a
// thumb reaches (GridGeometry.isPortraitPhone, the lock screen's rule).
function isPortraitPhone(width, height) {
    return width < 600 && height >= 1.5 * width;
}

// The centre of dot (1-9) in a grid of `side` pixels from (0, 0).
function centre(dot, side) {
    var s = side / 3;
    return { x: ((dot - 1) % 3 + 0.5) * s, y: (Math.floor((dot - 1) / 3) + 0.5) * s };
}

// Where along the segment a->b (0-1) it first enters dot's hit circle, or -1.
function entry(dot, a, b, side) {
    var c = centre(dot, side);
    var r = hitShare * side / 3;
    var dx = b.x - a.x, dy = b.y - a.y, fx = a.x - c.x, fy = a.y - c.y;
    var len2 = dx * dx + dy * dy;
    if (fx * fx + fy * fy <= r * r) return 0;
    if (len2 <= 0) return -1;
    var bq = 2 * (fx * dx + fy * dy);
    var cq = fx * fx + fy * fy - r * r;
    var disc = bq * bq - 4 * len2 * cq;
    if (disc < 0) return -1;
    var t = (-bq - Math.sqrt(disc)) / (2 * len2);
    return t >= 0 && t <= 1 ? t : -1;
}

// Adds dot to path (an array of dots), and first the unused dot a straight move to it passes over.
function add(path, dot) {
    if (path.length > 0) {
        var middle = passedOver[path[path.length - 1]][dot];
        if (middle !== 0 && path.indexOf(middle) < 0) path.push(middle);
    }
    path.push(dot);
}

// The finger or pointer moved from `from` to `to` (grid coordinates): the
// unused dots whose circles the move enters join the path, in the order it
// enters them. Returns whether the path grew.
function move(path, from, to, side) {
    var hits = [];
    for (var dot = 1; dot <= 9; dot++) {
        if (path.indexOf(dot) >= 0) continue;
        var t = entry(dot, from, to, side);
        if (t >= 0) hits.push({ t: t, dot: dot });
    }
    hits.sort(function (p, q) { return p.t - q.t; });
    var before = path.length;
    for (var i = 0; i < hits.length; i++) {
        if (path.indexOf(hits[i].dot) < 0) add(path, hits[i].dot);
    }
    return path.length > before;
}

// A typed dot (keys 1-9): taken as a straight move to it would take it.
function type(path, dot) {
    if (dot < 1 || dot > 9 || path.indexOf(dot) >= 0) return false;
    add(path, dot);
    return true;
}

// The fewest dots a pattern has (Pattern.minimumDots).
var minimumDots = 4;
