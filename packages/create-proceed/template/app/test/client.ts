/** The typed client of this app (proceedjs/client), as a browser or another service would use it. */
import { type Client, createClient, routeManifest } from 'proceedjs/client';
import { api } from '../src/app.js';

// The auth routes are named by .rest(), not by the convention: the manifest tells the client.
const routes = routeManifest(api);

export function client(origin: string, token?: string): Client<typeof api> {
  return createClient<typeof api>({ baseUrl: origin, routes, ...(token === undefined ? {} : { token }) });
}
