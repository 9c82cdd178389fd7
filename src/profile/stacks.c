/* stacks.c - placeholder until the stack trie lands */
