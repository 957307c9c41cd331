/**
 * The smallest Proceed app: one collection of tasks kept in memory. Run it with
 * `npx proceed dev examples/minimal/src/app.ts` (or `proceed start`, `proceed routes`).
 */
import { createApp, NotFoundError, procedure, procedures } from 'proceedjs';
import { z } from 'zod';

const Task = z.object({ id: z.string(), title: z.string(), done: z.boolean() });
type Task = z.infer<typeof Task>;

const tasks = new Map<string, Task>([['1', { id: '1', title: 'Try Proceed', done: false }]]);

export const taskProcedures = procedures('tasks', {
  listTasks: procedure()
    .input(z.object({ done: z.boolean().optional() }))
    .output(z.object({ data: z.array(Task) }))
    .query(({ input }) => ({
      data: [...tasks.values()].filter((task) => input.done === undefined || task.done === input.done),
    })),
  getTask: procedure()
    .input(z.object({ id: z.string() }))
    .output(Task)
    .query(({ input }) => {
      const task = tasks.get(input.id);
      if (task === undefined) throw new NotFoundError(`No task ${input.id}`);
      return task;
    }),
  createTask: procedure()
    .input(z.object({ title: z.string().min(1).max(200) }))
    .output(Task)
    .mutation(({ input }) => {
      const task = { id: String(tasks.size + 1), title: input.title, done: false };
      tasks.set(task.id, task);
      return task;
    }),
});

export default createApp().mount([taskProcedures]);
