// SPDX-License-Identifier: Apache-2.0
/* Module options from the pam.d line. */
#ifndef PL_CFG_H
#define PL_CFG_H

#include <security/pam_modules.h>

#include "pam_patternlock.h"

/* Defaults first, then each argv word; unknown or unusable words are logged
 * and ignored (a typo in pam.d must not lock anyone out). */
void pl_cfg_load(pam_handle_t *pamh, int argc, const char **argv,
		 struct pl_config *cfg);

#endif /* PL_CFG_H */
