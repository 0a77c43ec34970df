// The live, Keras-style progress line of an epoch under way (a pure function,
// so it is tested on fixed inputs; examples/mnist.cpp draws it on a terminal).
#pragma once

#include <string>

#include "actors/report/fit_observer.hpp"

namespace troupe::detail {

/// Renders the progress of an epoch as Keras does, e.g.
/// "1234/1875 [==================>...........] - ETA: 3s - loss: 0.4100 - 52k samples/s":
/// steps done of the epoch's rounds (from its samples), a bar `width`
/// characters wide, the time left at the rate so far, the mean training
/// loss so far and the rate.
std::string render_progress_bar(const epoch_progress& progress, int width = 30);

} // namespace troupe::detail
