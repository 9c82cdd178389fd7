#!/bin/bash
# placeholder: being written
echo "not written yet"; exit 77
