# SPDX-License-Identifier: Apache-2.0
# helper: a capture with given metrics.  usage: mk SCENARIO HZ METRICS-JSON
mk() { printf '{"format":"porthole-capture","version":1,"scenario":"%s","driver":"d","device":{"refreshHz":%s,"cores":2},"metrics":%s,"findings":[]}\n' "$1" "$2" "$3"; }
