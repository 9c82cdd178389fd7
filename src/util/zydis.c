/* zydis.c - the Zydis functions vigil calls, each loading libZydis on its
 * first call (dlopen) and forwarding to it.
 *
 * Linked, the library and its 2,527 relocations cost every vigil run
 * ~0.3 ms of start-up (a third of what vigil adds to a hello-world's),
 * and only `watch` (the writing instruction) and `probe` (where a
 * function's prologue ends) decode instructions.  writer.c and resolve.c
 * call Zydis by its own names through <Zydis/Zydis.h>; these definitions
 * are what they link to, and a Zydis function used without one here is
 * a link error, not a silent gap.  The soname is the one the build
 * found (meson.build), so the loaded library is the ABI the header
 * describes. */
#include "util/zydis.h"

#include <Zydis/Zydis.h>

#include "util/dynlib.h"

#ifndef VG_ZYDIS_SONAME
#error "VG_ZYDIS_SONAME: meson.build reads it from the libZydis.so it found"
#endif

static struct {
	ZyanStatus (*decoder_init)(ZydisDecoder *, ZydisMachineMode, ZydisStackWidth);
	ZyanStatus (*decode_full)(const ZydisDecoder *, const void *, ZyanUSize,
				  ZydisDecodedInstruction *, ZydisDecodedOperand *);
	ZyanStatus (*decode_instruction)(const ZydisDecoder *, ZydisDecoderContext *,
					 const void *, ZyanUSize, ZydisDecodedInstruction *);
	ZyanStatus (*formatter_init)(ZydisFormatter *, ZydisFormatterStyle);
	ZyanStatus (*formatter_set_property)(ZydisFormatter *, ZydisFormatterProperty,
					     ZyanUPointer);
	ZyanStatus (*format_instruction)(const ZydisFormatter *, const ZydisDecodedInstruction *,
					 const ZydisDecodedOperand *, ZyanU8, char *, ZyanUSize,
					 ZyanU64, void *);
	const char *(*mnemonic_string)(ZydisMnemonic);
	ZydisRegisterClass (*register_class)(ZydisRegister);
	ZydisRegister (*register_largest)(ZydisMachineMode, ZydisRegister);
	const char *(*register_string)(ZydisRegister);
} zy;
static const char *const zy_soname[] = { VG_ZYDIS_SONAME };
static const struct vg_dynlib_fn zy_fns[] = {
	{ "ZydisDecoderInit", (void **)&zy.decoder_init },
	{ "ZydisDecoderDecodeFull", (void **)&zy.decode_full },
	{ "ZydisDecoderDecodeInstruction", (void **)&zy.decode_instruction },
	{ "ZydisFormatterInit", (void **)&zy.formatter_init },
	{ "ZydisFormatterSetProperty", (void **)&zy.formatter_set_property },
	{ "ZydisFormatterFormatInstruction", (void **)&zy.format_instruction },
	{ "ZydisMnemonicGetString", (void **)&zy.mnemonic_string },
	{ "ZydisRegisterGetClass", (void **)&zy.register_class },
	{ "ZydisRegisterGetLargestEnclosing", (void **)&zy.register_largest },
	{ "ZydisRegisterGetString", (void **)&zy.register_string },
};
static struct vg_dynlib zy_lib = VG_DYNLIB(zy_soname, zy_fns);

bool vg_zydis_load(const char **why)
{
	return vg_dynlib_get(&zy_lib, why);
}

/* What a call answers without the library: a failure, as for bytes that
 * are not an instruction. */
#define ZY_FAILED ZYAN_STATUS_FAILED

ZyanStatus ZydisDecoderInit(ZydisDecoder *decoder, ZydisMachineMode machine_mode,
			    ZydisStackWidth stack_width)
{
	return vg_zydis_load(NULL) ? zy.decoder_init(decoder, machine_mode, stack_width) : ZY_FAILED;
}

ZyanStatus ZydisDecoderDecodeFull(const ZydisDecoder *decoder, const void *buffer,
				  ZyanUSize length, ZydisDecodedInstruction *instruction,
				  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT])
{
	return vg_zydis_load(NULL) ? zy.decode_full(decoder, buffer, length, instruction, operands)
				   : ZY_FAILED;
}

ZyanStatus ZydisDecoderDecodeInstruction(const ZydisDecoder *decoder,
					 ZydisDecoderContext *context, const void *buffer,
					 ZyanUSize length, ZydisDecodedInstruction *instruction)
{
	return vg_zydis_load(NULL) ? zy.decode_instruction(decoder, context, buffer, length,
							   instruction)
				   : ZY_FAILED;
}

ZyanStatus ZydisFormatterInit(ZydisFormatter *formatter, ZydisFormatterStyle style)
{
	return vg_zydis_load(NULL) ? zy.formatter_init(formatter, style) : ZY_FAILED;
}

ZyanStatus ZydisFormatterSetProperty(ZydisFormatter *formatter, ZydisFormatterProperty property,
				     ZyanUPointer value)
{
	return vg_zydis_load(NULL) ? zy.formatter_set_property(formatter, property, value)
				   : ZY_FAILED;
}

ZyanStatus ZydisFormatterFormatInstruction(const ZydisFormatter *formatter,
					   const ZydisDecodedInstruction *instruction,
					   const ZydisDecodedOperand *operands, ZyanU8 operand_count,
					   char *buffer, ZyanUSize length, ZyanU64 runtime_address,
					   void *user_data)
{
	return vg_zydis_load(NULL) ? zy.format_instruction(formatter, instruction, operands,
							   operand_count, buffer, length,
							   runtime_address, user_data)
				   : ZY_FAILED;
}

const char *ZydisMnemonicGetString(ZydisMnemonic mnemonic)
{
	return vg_zydis_load(NULL) ? zy.mnemonic_string(mnemonic) : NULL;
}

ZydisRegisterClass ZydisRegisterGetClass(ZydisRegister reg)
{
	return vg_zydis_load(NULL) ? zy.register_class(reg) : ZYDIS_REGCLASS_INVALID;
}

ZydisRegister ZydisRegisterGetLargestEnclosing(ZydisMachineMode mode, ZydisRegister reg)
{
	return vg_zydis_load(NULL) ? zy.register_largest(mode, reg) : ZYDIS_REGISTER_NONE;
}

const char *ZydisRegisterGetString(ZydisRegister reg)
{
	return vg_zydis_load(NULL) ? zy.register_string(reg) : NULL;
}
