// SPDX-License-Identifier: Apache-2.0
/// @file
/// `HURRAY_LIFETIMEBOUND`: marks a function whose result borrows from an
/// argument (or from the object it is called on), so that Clang reports a
/// result that outlives it (`-Wdangling`). A no-op on other compilers.
///
/// The rule of the library: what a call returns owns what it shows (a
/// `SharedBuffer`, a `TypedBuffer`, a `TensorView` made by a file, a copy),
/// except the accessors marked with this attribute, whose result is valid
/// while the object they were called on lives.
#pragma once

#if defined(__clang__) && defined(__has_cpp_attribute)
#if __has_cpp_attribute(clang::lifetimebound)
/// The result borrows from this argument (or, after a member function's
/// qualifiers, from the object): valid while it lives.
#define HURRAY_LIFETIMEBOUND [[clang::lifetimebound]]
#endif
#endif
#ifndef HURRAY_LIFETIMEBOUND
/// The result borrows from this argument (or, after a member function's
/// qualifiers, from the object): valid while it lives. A no-op here.
#define HURRAY_LIFETIMEBOUND
#endif
