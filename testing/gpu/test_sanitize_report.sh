#!/usr/bin/env bash
# Runs test_sanitize_report.py with Debian's python3 (numpy for run_suite).
exec /usr/bin/python3 "$(dirname "$0")/test_sanitize_report.py"
