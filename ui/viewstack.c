/* The views by id and the stack they are shown in (view.h). */
#include "config.h"

#include "ui.h"
#include "view.h"

static const struct view_ops *const all_views[VIEW_COUNT] = {
	[VIEW_TABLE] = &tableview_ops,
	[VIEW_DETAIL] = &detailview_ops,
	[VIEW_TREE] = &treeview_ops,
	[VIEW_FLAME] = &flameview_ops,
	[VIEW_THREADS] = &threadsview_ops,
	[VIEW_TASKS] = &tasksview_ops,
	[VIEW_FRAMES] = &frameview_ops,
	[VIEW_HELP] = &helpview_ops,
};

const struct view_ops *
view_ops(enum view_id id)
{
	return all_views[id];
}

enum view_id
view_top(const struct ui *u)
{
	return u->stack[u->nstack - 1];
}

enum view_id
view_base(const struct ui *u)
{
	return u->stack[0];
}

bool
view_stacked(const struct ui *u, enum view_id id)
{
	for (int i = 0; i < u->nstack; i++)
		if (u->stack[i] == id)
			return true;
	return false;
}

enum view_id
view_body(const struct ui *u)
{
	int i = u->nstack - 1;
	while (i > 0 && all_views[u->stack[i]]->overlay)
		i--;
	return u->stack[i];
}

void
view_push(struct ui *u, enum view_id id)
{
	if (all_views[id]->base) {
		u->stack[0] = id;
		u->nstack = 1;
	} else if (u->nstack < VIEW_STACK_MAX) {
		u->stack[u->nstack++] = id;
	}
	u->dirty = true;
}

void
view_pop(struct ui *u)
{
	if (u->nstack > 1)
		u->nstack--;
	u->dirty = true;
}
