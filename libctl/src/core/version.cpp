#include "probectl/version.hpp"

#include "uapi/probectl.h"

namespace probectl {

Version version() noexcept {
    return {PROBECTL_VERSION_MAJOR, PROBECTL_VERSION_MINOR, PROBECTL_VERSION_PATCH,
            PROBECTL_VERSION_STRING, PROBECTL_GENL_VERSION};
}

}  // namespace probectl
