#!/usr/bin/env bash
# Runs the MPI communicator checks on real processes under mpirun: two, or as many as the
# second argument says.
set -euo pipefail
binary="$1"
ranks="${2:-2}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Loopback only, no network discovery: CI machines have no network.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
exec mpirun --oversubscribe -np "$ranks" "$binary"
