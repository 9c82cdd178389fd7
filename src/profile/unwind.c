/* unwind.c - placeholder until the unwinder lands */
