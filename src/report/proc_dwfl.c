/* SPDX-License-Identifier: MIT */
/* proc_dwfl.c: a libdwfl session for one traced process (see proc_dwfl.h). */
#include "proc_dwfl.h"

#include <unistd.h>
#include "frame.h"

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static void report_module(Dwfl *dwfl, const struct mt_module *m)
{
	if (!m->path)
		return;
	/* libdwfl owns (and closes) the descriptor of a reported module. */
	int fd = m->fd >= 0 ? dup(m->fd) : -1;

	/*
	 * add_p_vaddr=true makes libdwfl take BASE as the load bias
	 * (runtime address - ELF vaddr), which is what mt_module.bias is;
	 * with false it would take BASE as the address of the first PT_LOAD
	 * segment, which differs for objects not linked at vaddr 0.
	 */
	Dwfl_Module *mod = dwfl_report_elf(dwfl, mt_path_basename(m->path),
					   m->path, fd, m->bias, true);
	if (!mod) {
		if (fd >= 0)
			close(fd);
		return;
	}
	void **userdata;

	if (dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL,
			     NULL))
		*userdata = (void *)m;
}

Dwfl *mt_proc_dwfl_open(const struct mt_process *proc)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);

	if (!dwfl)
		return NULL;
	dwfl_report_begin(dwfl);
	for (size_t i = 0; proc->mods && i < proc->nmods; i++)
		report_module(dwfl, &proc->mods[i]);
	dwfl_report_end(dwfl, NULL, NULL);
	return dwfl;
}

const struct mt_module *mt_proc_dwfl_module(Dwfl_Module *mod)
{
	void **userdata;

	if (!dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL,
			      NULL))
		return NULL;
	return *userdata;
}
