package zero

import "github.com/zerosim/zerosim/internal/scenariotest"

// resolved fills and resolves a hand-built test scenario (one helper for
// every package's tests).
var resolved = scenariotest.Resolved
