/* SPDX-License-Identifier: Apache-2.0 */
/*
 * banned.h: functions that have no safe use in this code base.
 *
 * Each is replaced by a call to an undeclared function whose name says why,
 * so a use is a compile error (with -Werror=implicit-function-declaration,
 * which -Wall gives us) rather than a review comment.  Included last by
 * ph_common.h, after every system header that declares these, the way git's
 * banned.h is.  Use ph_buf or snprintf instead.
 */
#ifndef PH_BANNED_H
#define PH_BANNED_H

#define PH_BANNED(func) sorry_##func##_is_a_banned_function

#undef strcpy
#define strcpy(x, y) PH_BANNED(strcpy)
#undef strcat
#define strcat(x, y) PH_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) PH_BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) PH_BANNED(strncat)
#undef strtok
#define strtok(x, y) PH_BANNED(strtok)
#undef strtok_r
#define strtok_r(x, y, z) PH_BANNED(strtok_r)
#undef gets
#define gets(x) PH_BANNED(gets)

#undef sprintf
#undef vsprintf
#define sprintf(...)  PH_BANNED(sprintf)
#define vsprintf(...) PH_BANNED(vsprintf)

#endif
