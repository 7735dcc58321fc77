// Umbrella header: the whole public libctl API.
#pragma once

#include "probectl/client.hpp"
#include "probectl/event.hpp"
#include "probectl/kernel_symbols.hpp"
#include "probectl/probe_spec.hpp"
#include "probectl/result.hpp"
#include "probectl/session.hpp"
#include "probectl/version.hpp"
