"""Assemble a base and an edited module with ptxas and compare what the hardware gets (SASS,
registers, shared memory), and run both on a GPU when one is present: `ptx2py verify`."""
