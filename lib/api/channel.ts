import { z } from 'zod';

// A notification channel as both applications answer it (the console's channels and the fleet
// plane's alert channels share lib/channels): one shape, named by each document (its schema id).
export const channelAnswer = (schemaId: string) =>
  z
    .object({
      id: z.string(),
      name: z.string(),
      type: z.enum(['webhook', 'ntfy', 'teams', 'chat']),
      enabled: z.boolean(),
      topic: z.string().optional(),
      /** the URL's origin only: the URL and the secrets are never shown */
      urlOrigin: z.string(),
      secretSet: z.boolean(),
      tokenSet: z.boolean(),
      events: z.array(z.string()).optional(),
      createdAt: z.string(),
      updatedAt: z.string(),
      lastDelivery: z.object({ at: z.string(), ok: z.boolean(), status: z.number().optional(), error: z.string().optional() }).optional(),
    })
    .meta({ id: schemaId });
