// Troupe's public API in one include: build or bring a model, load data,
// fit it over replicas here or on nodes, evaluate, predict, save, export.
#pragma once

#include <troupe/callbacks.hpp>
#include <troupe/check_gradient.hpp>
#include <troupe/command_line.hpp>
#include <troupe/data_source.hpp>
#include <troupe/dataset.hpp>
#include <troupe/expected.hpp>
#include <troupe/fit.hpp>
#include <troupe/layer.hpp>
#include <troupe/model.hpp>
#include <troupe/node.hpp>
#include <troupe/optimizer.hpp>
#include <troupe/sequential.hpp>
#include <troupe/version.hpp>
