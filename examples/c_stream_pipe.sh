#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The ctest checks of examples/c_stream_send.c and c_stream_recv.c (examples/CMakeLists.txt):
#   c_stream_pipe.sh SEND RECV pipe FILE...              SEND FILE | RECV FILE says equal, for each FILE
#   c_stream_pipe.sh SEND RECV detect BASIC OTHER BIG    RECV finds a different file, a cut stream, a container
#   c_stream_pipe.sh SEND RECV composite FILE            SEND refuses a file with a composite (exit status 3)
send=$1
recv=$2
mode=$3
shift 3
case "$mode" in
pipe)
    for f in "$@"; do
        "$send" "$f" | "$recv" "$f" || exit 1
    done
    ;;
detect)
    basic=$1 other=$2 big=$3
    if "$send" "$basic" 2>/dev/null | "$recv" "$other"; then
        echo "FAIL: $basic streamed and compared with $other: equal"; exit 1
    fi
    if "$send" "$big" 2>/dev/null | head -c 5000 | "$recv" "$big"; then
        echo "FAIL: $big cut after 5000 bytes: equal"; exit 1
    fi
    if out=$("$recv" "$basic" 2>&1 < "$basic"); then
        echo "FAIL: $basic (a container) read as a stream"; exit 1
    fi
    echo "$out"
    case "$out" in
    *"HRRYFILE container"*hurray_file_open*) ;;
    *) echo "FAIL: no message saying the input is a container"; exit 1 ;;
    esac
    echo "differences, a cut stream and a container were all detected"
    ;;
composite)
    out=$("$send" "$1" 2>&1 >/dev/null)
    status=$?
    echo "$out"
    case "$out" in
    *"holds a composite: not streamed"*) ;;
    *) echo "FAIL: no message about the composite"; exit 1 ;;
    esac
    [ "$status" -eq 3 ] || { echo "FAIL: exit status $status, not 3"; exit 1; }
    ;;
*)
    echo "usage: c_stream_pipe.sh SEND RECV pipe|detect|composite FILE..."; exit 2
    ;;
esac
